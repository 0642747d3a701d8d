package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cosmosctl/cosmosctl/hedgetest"
	"github.com/cosmosctl/cosmosctl/output"
)

// plotFile is hedge-test's --plot, checked before the run: a path the chart cannot be
// written to is a usage error before the first request, not a failure after minutes of
// test that loses its results.
type plotFile struct {
	path   string // as given, for messages
	target string // the file written: path, or where its symbolic link leads
	html   bool
}

// checkPlot checks that the chart can be written to path: its extension, its directory,
// that a file can be created there, and that an existing file may be replaced. It
// changes nothing: an existing file keeps its contents until the chart is complete.
func checkPlot(path string) (*plotFile, error) {
	p := &plotFile{path: path, target: path, html: strings.EqualFold(filepath.Ext(path), ".html")}
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if p.target, err = filepath.EvalSymlinks(path); err != nil {
			return nil, usageErrorf("--plot %s is a symbolic link to nowhere (%s): remove it or choose another path", path, reason(err))
		}
		fi, err = os.Stat(p.target)
	}
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return nil, usageErrorf("--plot %s is not a regular file: give the path of a file ending in .svg or .html", path)
	case err == nil:
		// Opened for writing without truncating it: a read-only file is refused now.
		f, err := os.OpenFile(p.target, os.O_WRONLY, 0)
		if err != nil {
			return nil, usageErrorf("--plot %s cannot be written (%s): choose another path", path, reason(err))
		}
		f.Close()
	case !errors.Is(err, fs.ErrNotExist):
		return nil, usageErrorf("--plot %s cannot be written (%s): choose another path", path, reason(err))
	}
	dir := filepath.Dir(p.target)
	switch fi, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, usageErrorf("--plot %s: the directory %s does not exist: create it first, or write the chart elsewhere", path, dir)
	case err != nil:
		return nil, usageErrorf("--plot %s: the directory %s cannot be used (%s): write the chart elsewhere", path, dir, reason(err))
	case !fi.IsDir():
		return nil, usageErrorf("--plot %s: %s is not a directory: write the chart elsewhere", path, dir)
	}
	f, err := createBeside(p.target)
	if err != nil {
		return nil, usageErrorf("--plot %s: cannot create files in %s (%s): choose a directory you can write to", path, dir, reason(err))
	}
	f.Close()
	os.Remove(f.Name())
	return p, nil
}

// write renders the chart into a new file beside the target and renames it over the
// target once it is complete: an existing file is replaced whole or not at all, and a
// failure (a full disk, a directory removed during the run) leaves no partial chart. A
// replaced file keeps its permissions; a new one gets os.Create's (0666 less the umask).
func (p *plotFile) write(render func(io.Writer) error) error {
	f, err := createBeside(p.target)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = render(bw)
	if err == nil {
		err = bw.Flush()
	}
	if fi, serr := os.Stat(p.target); err == nil && serr == nil {
		err = f.Chmod(fi.Mode().Perm())
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p.target)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// createBeside creates a new, hidden file in target's directory, as os.Create would
// (mode 0666 less the umask).
func createBeside(target string) (*os.File, error) {
	for {
		name := filepath.Join(filepath.Dir(target), fmt.Sprintf(".%s.%d-%08x.tmp", filepath.Base(target), os.Getpid(), rand.Uint32()))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}

// reason is an error without the path a PathError repeats.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// writeHedgeTestPlot writes the chart, as an SVG image or as an HTML page with the
// strategies table, once the results are printed. A failure is the command's error
// (exit 1), the results being complete on stdout.
func (o *hedgeTestOptions) writeHedgeTestPlot(streams *IOStreams, p *plotFile, scenario string, results []hedgetest.Result, rec hedgetest.Recommendation, series []output.Series, extraSections bool) error {
	title := "cosmosctl hedge-test: " + describeScenario(scenario)
	err := p.write(func(w io.Writer) error {
		if !p.html {
			return output.WriteCDFSVG(w, series, title, o.targetP99)
		}
		return output.WriteCDFHTML(w, o.hedgeTestPage(title, results, rec, series, extraSections))
	})
	if err != nil {
		return fmt.Errorf("the results above are complete, but the chart could not be written to --plot %s: %s", p.path, reason(err))
	}
	fmt.Fprintf(streams.ErrOut, "chart written to %s\n", p.path)
	return nil
}

// hedgeTestPage is the --plot .html page: the strategies table as the terminal prints
// it, with the requests each strategy sent, and the chart.
func (o *hedgeTestOptions) hedgeTestPage(title string, results []hedgetest.Result, rec hedgetest.Recommendation, series []output.Series, extraSections bool) output.ChartPage {
	header, rows := hedgeTestRows(results)
	page := output.ChartPage{Title: title, Verdict: verdictText(rec), Series: series, TargetP99: o.targetP99,
		Header:     append([]string{header[0], "REQUESTS"}, header[1:]...),
		AlignRight: []int{1, 2, 3, 4, 5, 6, 7, 8, 9},
		Notes:      []string{extraRUNote},
	}
	for i, r := range rows {
		page.Rows = append(page.Rows, append([]string{r[0], fmt.Sprint(results[i].Attempts)}, r[1:]...))
	}
	if rec.Strategy != "" {
		page.Highlight, page.HighlightLabel = rec.Strategy, "recommended"
		if !rec.Met {
			page.HighlightLabel = "closest to the target"
		}
	}
	loop := "closed loop"
	if o.rate > 0 {
		loop = fmt.Sprintf("open loop at %g reads/s", o.rate)
	}
	page.Summary = fmt.Sprintf("%d reads per strategy, %d in flight (%s); target p99 %s; %s",
		o.count, o.concurrency, loop, output.HumanDuration(o.targetP99), time.Now().Format("2006-01-02 15:04 MST"))
	if extraSections {
		page.Notes = append(page.Notes, "The scenario's further tables (replica moves, writes) are in the terminal output and in -o json.")
	}
	return page
}
