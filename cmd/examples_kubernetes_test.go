package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/cosmosctl/cosmosctl/shard"
)

// The Kubernetes manifests of examples/kubernetes/ are batch/v1 Jobs that a cluster
// takes: each decodes strictly into k8s.io/api's Job (an unknown or misspelt field, a
// duplicate key, a wrong type is an error, as kubectl apply's server-side field
// validation would make it), is an Indexed Job whose completions are the N of its
// --shard auto/N, and its cosmosctl args, as Kubernetes expands them in each pod, are
// flags cosmosctl takes, naming every shard once and no secret.
func TestKubernetesIndexedJobManifests(t *testing.T) {
	paths, err := filepath.Glob("../examples/kubernetes/*-indexed-job.yaml")
	if err != nil || len(paths) < 2 {
		t.Fatalf("manifests: %v %v", paths, err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var job batchv1.Job
			if err := yaml.UnmarshalStrict(b, &job); err != nil {
				t.Fatalf("not a batch/v1 Job: %v", err)
			}
			checkIndexedJob(t, &job)
			// The decoding is strict: the same manifest with a field misspelt is refused.
			var bad batchv1.Job
			if err := yaml.UnmarshalStrict([]byte(strings.Replace(string(b), "completionMode:", "completionMod:", 1)), &bad); err == nil ||
				!strings.Contains(err.Error(), "completionMod") {
				t.Fatalf("a misspelt field was taken: %v", err)
			}
		})
	}
}

func checkIndexedJob(t *testing.T, job *batchv1.Job) {
	t.Helper()
	spec := job.Spec
	switch {
	case job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Name == "":
		t.Fatalf("apiVersion %q kind %q name %q", job.APIVersion, job.Kind, job.Name)
	case spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion:
		t.Fatal("completionMode is not Indexed: the pods get no JOB_COMPLETION_INDEX")
	case spec.Completions == nil || *spec.Completions < 1:
		t.Fatal("no completions")
	case spec.Parallelism == nil || *spec.Parallelism < 1 || *spec.Parallelism > *spec.Completions:
		t.Fatalf("parallelism %v, completions %d", spec.Parallelism, *spec.Completions)
	case spec.BackoffLimitPerIndex != nil && spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever:
		t.Fatal("backoffLimitPerIndex needs restartPolicy: Never")
	case len(spec.Template.Spec.Containers) != 1:
		t.Fatalf("%d containers", len(spec.Template.Spec.Containers))
	}
	n := int(*spec.Completions)
	c := spec.Template.Spec.Containers[0]
	volumes := map[string]bool{}
	for _, v := range spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim == nil && v.EmptyDir == nil {
			t.Fatalf("volume %s is neither a PVC nor an emptyDir", v.Name)
		}
		volumes[v.Name] = true
	}
	for _, m := range c.VolumeMounts {
		if !volumes[m.Name] {
			t.Fatalf("volume mount %s has no volume", m.Name)
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.Name == "COSMOSCTL_KEY" && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil):
			t.Fatal("COSMOSCTL_KEY must come from a Secret")
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			env[e.Name] = "5e0c3c1e-0d3b-4c59-9f0e-2d1f6a7b8c9d" // what the downward API would give: a uid
		case e.ValueFrom != nil:
			env[e.Name] = "from-a-secret"
		default:
			env[e.Name] = e.Value
		}
	}
	if _, ok := env["COSMOSCTL_KEY"]; !ok {
		t.Fatal("no COSMOSCTL_KEY from a Secret")
	}
	for _, a := range c.Args {
		if a == "--key" || strings.HasPrefix(a, "--key=") || strings.HasPrefix(a, "--connection-string") {
			t.Fatalf("a secret in args: %s", a)
		}
	}
	files := map[string]int{}
	for i := range n {
		args := expandKubernetesArgs(t, c.Args, env, i)
		root := NewRootCmd(&IOStreams{})
		cmd, rest, err := root.Find(args)
		if err != nil || cmd == root {
			t.Fatalf("%v: no such command: %v", args, err)
		}
		if cmd.Flags().Lookup("shard") == nil {
			t.Skipf("cosmosctl %s takes no --shard in this build", cmd.Name())
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatalf("index %d: cosmosctl %s refuses %q: %v", i, cmd.Name(), rest, err)
		}
		if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
			t.Fatalf("index %d: %v", i, err)
		}
		getenv := func(k string) string {
			if k == shard.IndexEnv {
				return strconv.Itoa(i)
			}
			return env[k]
		}
		sp, err := shard.ParseSpec(cmd.Flags().Lookup("shard").Value.String(), getenv)
		if err != nil || sp != (shard.Spec{Index: i, Count: n}) {
			t.Fatalf("index %d of %d: --shard is %v (%v)", i, n, sp, err)
		}
		for _, name := range []string{"state", "output-file", "rejected"} {
			if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
				files[f.Value.String()]++
			}
		}
		if f := cmd.Flags().Lookup("state"); f == nil || !f.Changed {
			t.Fatalf("index %d: no --state: a pod started again for its index would start its shard afresh", i)
		}
	}
	for f, k := range files {
		if k != 1 {
			t.Fatalf("%d shards write %s: each needs its own", k, f)
		}
	}
}

var kubernetesVar = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expandKubernetesArgs expands $(VAR) in args as Kubernetes does for a container's
// args: from the container's env, and JOB_COMPLETION_INDEX, which the Job controller
// adds to each pod of an Indexed Job. A reference to an undefined variable stays as it
// is in Kubernetes, which is never what a manifest means here: an error.
func expandKubernetesArgs(t *testing.T, args []string, env map[string]string, index int) []string {
	t.Helper()
	out := make([]string, len(args))
	for k, a := range args {
		out[k] = kubernetesVar.ReplaceAllStringFunc(a, func(ref string) string {
			name := kubernetesVar.FindStringSubmatch(ref)[1]
			if name == shard.IndexEnv {
				return strconv.Itoa(index)
			}
			v, ok := env[name]
			if !ok {
				t.Fatalf("%s refers to %s, which the container's env does not set", a, name)
			}
			return v
		})
	}
	return out
}
