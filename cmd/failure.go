package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cosmosctl/cosmosctl/config"
	"github.com/cosmosctl/cosmosctl/engine"
	"github.com/cosmosctl/cosmosctl/output"
)

// failureObject is what a failure prints on stdout under -o json when the command printed
// nothing there itself (an item command prints its result object, whose "error" has the
// same shape): scripts parse stdout, and a usage error must not leave it empty.
type failureObject struct {
	Error    *output.ErrorObject `json:"error"`
	ExitCode int                 `json:"exit_code"`
}

// Error kinds of failures that are not the service's, beside output's.
const (
	errorKindUsage       = "usage"       // bad flags, arguments, input or configuration: nothing was sent
	errorKindAuth        = "auth"        // no credential: nothing was sent
	errorKindInterrupted = "interrupted" // Ctrl-C or SIGTERM
	errorKindBreach      = "threshold_breach"
	errorKindPartial     = "partial" // import: completed, some lines rejected or failed
)

func failureJSON(err error, code int) *failureObject {
	e := &output.ErrorObject{Kind: output.ErrorKindOther, Message: err.Error()}
	if r, ok := output.ResultJSON(nil, err).(*output.ResultObject); ok && r.Error != nil {
		e = r.Error
	}
	classifyFailure(e, err)
	return &failureObject{Error: e, ExitCode: code}
}

// classifyFailure gives an error the service did not answer its kind: an interruption,
// bad input (the command's or the engine's), a missing credential or a breached
// threshold. Errors output already classified (service, timeout, network) keep theirs.
func classifyFailure(e *output.ErrorObject, err error) {
	if e == nil || e.Kind != output.ErrorKindOther {
		return
	}
	var (
		ue *UsageError
		ie *engine.InputError
		ae *AuthError
		tb *ThresholdBreachError
		pe *PartialError
	)
	switch {
	case errors.Is(err, errInterrupted):
		e.Kind, e.Code = errorKindInterrupted, "Interrupted"
	case errors.As(err, &ue), errors.As(err, &ie):
		e.Kind, e.Code = errorKindUsage, "UsageError"
	case errors.As(err, &ae):
		e.Kind, e.Code = errorKindAuth, "AuthenticationFailed"
	case errors.As(err, &tb):
		e.Kind, e.Code = errorKindBreach, "ThresholdBreached"
	case errors.As(err, &pe):
		e.Kind, e.Code = errorKindPartial, "PartiallyImported"
	}
}

// failureAsJSON says whether the invocation asked for JSON: the format the command
// resolved (flag, environment, profile), else its -o flag, else -o among the arguments
// (a flag error can stop parsing before it), else COSMOSCTL_OUTPUT, else the output of
// the profile the command would have used.
func failureAsJSON(c *cobra.Command, io *IOStreams, args []string) bool {
	if io.dataOnly {
		return false
	}
	if c != nil {
		if f := c.Flags().Lookup("output"); f != nil && len(f.Annotations[dataAnnotation]) > 0 {
			return false
		}
	}
	if io.output != "" {
		return config.JSONOutput(io.output)
	}
	if c != nil {
		if f := c.Flags().Lookup("output"); f != nil && f.Changed {
			return config.JSONOutput(f.Value.String())
		}
	}
	if v, ok := outputArg(args); ok {
		return config.JSONOutput(v)
	}
	if v := os.Getenv("COSMOSCTL_OUTPUT"); v != "" {
		return config.JSONOutput(v)
	}
	profile, _ := flagArg(args, "profile", "")
	return config.JSONOutput(config.ProfileOutput(profile, os.LookupEnv))
}

// failureAsLine says whether a failure printed as JSON is one line: when stdout is a
// stream of JSON lines (-o ndjson, a command whose JSON is NDJSON), so that the
// stream stays one JSON value a line whatever comes after it.
func failureAsLine(c *cobra.Command, io *IOStreams, args []string) bool {
	if io.output != "" {
		return io.stream
	}
	v, ok := outputArg(args)
	if !ok {
		v = os.Getenv("COSMOSCTL_OUTPUT")
	}
	v = strings.ToLower(strings.TrimSpace(v))
	if c != nil {
		if f := c.Flags().Lookup("output"); f != nil && len(f.Annotations[streamAnnotation]) > 0 {
			return true // its JSON is a stream whatever -o says
		}
	}
	return v == config.OutputNDJSON
}

// jqArg says whether --jq was among args, for a failure before the flags were parsed.
func jqArg(args []string) bool {
	_, ok := flagArg(args, "jq", "")
	return ok
}

// outputArg is the last -o/--output value among args, in any of pflag's spellings.
func outputArg(args []string) (value string, ok bool) { return flagArg(args, "output", "o") }

// flagArg is the last value of the flag --long (or -short, when short is not "") among
// args, in any of pflag's spellings.
func flagArg(args []string, long, short string) (value string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return value, ok
		case a == "--"+long || (short != "" && a == "-"+short):
			if i+1 < len(args) {
				value, ok = args[i+1], true
				i++
			}
		case strings.HasPrefix(a, "--"+long+"="):
			value, ok = strings.TrimPrefix(a, "--"+long+"="), true
		case short != "" && strings.HasPrefix(a, "-"+short) && !strings.HasPrefix(a, "--"):
			value, ok = strings.TrimPrefix(strings.TrimPrefix(a, "-"+short), "="), true
		}
	}
	return value, ok
}

// writeErrorEvent writes a failure as one line of an NDJSON event stream:
// {"event":"error","error":{…},"exit_code":N}.
func writeErrorEvent(w io.Writer, f *failureObject) {
	b, err := json.Marshal(struct {
		Event string `json:"event"`
		*failureObject
	}{"error", f})
	if err != nil {
		fmt.Fprintln(w, "Error: "+oneLine(f.Error.Message))
		return
	}
	w.Write(append(b, '\n'))
}
