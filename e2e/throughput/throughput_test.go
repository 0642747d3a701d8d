package throughput_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/cosmosctl/cosmosctl/emulator"
	"github.com/cosmosctl/cosmosctl/internal/testkit"
)

// `throughput set` never moves an offer between manual and autoscale by accident: a
// number keeps the offer's mode, and only --migrate changes it, with the service's
// migration request (a PUT of the offer with x-ms-cosmos-migrate-offer-to-autopilot or
// x-ms-cosmos-migrate-offer-to-manual-throughput). The binary runs against an emulator
// behind a recording proxy, so that the tests see the requests it sends, and the
// official Go SDK reads the offer afterwards.

// offerPut is one PUT of an offer the proxy saw.
type offerPut struct {
	header http.Header
	body   map[string]any
}

// account is an emulator with one region (app/items, 400 RU/s manual) seen through a
// proxy that records every PUT of an offer; env points the binary at the proxy.
type account struct {
	srv  *emulator.Server
	bin  string
	env  []string
	mu   sync.Mutex
	puts []offerPut
}

func newAccount(t *testing.T) *account {
	t.Helper()
	a := &account{bin: testkit.Binary(t)}
	a.srv = testkit.Account(t, func(c *emulator.Config) { c.Regions = []emulator.RegionConfig{{Name: "East US"}} })
	region, _ := a.srv.RegionEndpoint("East US")
	target, err := url.Parse(region)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/offers/") {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			p := offerPut{header: r.Header.Clone()}
			if err := json.Unmarshal(b, &p.body); err != nil {
				t.Errorf("a PUT of an offer whose body is not JSON: %q", b)
			}
			a.mu.Lock()
			a.puts = append(a.puts, p)
			a.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	frontURL := "http://" + front.Listener.Addr().String()
	// The account's answer names the region's endpoint; the client must come back to
	// the proxy for every request, so the proxy's address replaces it there.
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path != "/" {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte(strings.TrimSuffix(region, "/")), []byte(frontURL))
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Del("Content-Length")
		return nil
	}
	front.Start()
	t.Cleanup(front.Close)
	a.env = append(os.Environ(), "COSMOSCTL_ENDPOINT="+front.URL)
	return a
}

func (a *account) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return testkit.RunBinary(t, a.bin, a.env, "", args...)
}

// throughput runs args (a throughput command) with -o json and decodes its answer.
func (a *account) throughput(t *testing.T, args ...string) throughputJSON {
	t.Helper()
	code, out, errOut := a.run(t, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("cosmosctl %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
	}
	var tp throughputJSON
	if err := json.Unmarshal([]byte(out), &tp); err != nil {
		t.Fatalf("cosmosctl %s printed %q: %v", strings.Join(args, " "), out, err)
	}
	return tp
}

func (a *account) offerPuts() []offerPut {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]offerPut(nil), a.puts...)
}

type throughputJSON struct {
	Mode         string `json:"mode"`
	RUPerSecond  *int   `json:"ru_per_second"`
	AutoscaleMax *int   `json:"autoscale_max_ru_per_second"`
}

func (tp throughputJSON) String() string {
	b, _ := json.Marshal(tp)
	return string(b)
}

func isAutoscale(tp throughputJSON, max int) bool {
	return tp.Mode == "autoscale" && tp.AutoscaleMax != nil && *tp.AutoscaleMax == max
}

func isManual(tp throughputJSON, ru int) bool {
	return tp.Mode == "manual" && tp.RUPerSecond != nil && *tp.RUPerSecond == ru && tp.AutoscaleMax == nil
}

// sdkThroughput reads the container's throughput with the official Go SDK.
func sdkThroughput(t *testing.T, srv *emulator.Server, container string) *azcosmos.ThroughputProperties {
	t.Helper()
	cred, err := azcosmos.NewKeyCredential(srv.Key())
	if err != nil {
		t.Fatal(err)
	}
	client, err := azcosmos.NewClientWithKey(srv.Endpoint(), cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c, err := client.NewContainer("app", container)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.ReadThroughput(context.Background(), nil)
	if err != nil {
		t.Fatalf("the SDK's ReadThroughput of %s: %v", container, err)
	}
	return resp.ThroughputProperties
}

func TestANumberKeepsAnAutoscaleOfferAutoscale(t *testing.T) {
	a := newAccount(t)
	if code, _, errOut := a.run(t, "container", "create", "auto", "--partition-key", "/pk", "--autoscale-max", "4000"); code != 0 {
		t.Fatalf("container create --autoscale-max 4000: exit %d, stderr %q", code, errOut)
	}
	if tp := a.throughput(t, "throughput", "set", "auto", "--throughput", "6000"); !isAutoscale(tp, 6000) {
		t.Errorf("throughput set --throughput 6000 on an autoscale offer answered %s, want autoscale with a maximum of 6000 RU/s", tp)
	}
	if tp := a.throughput(t, "throughput", "show", "auto"); !isAutoscale(tp, 6000) {
		t.Errorf("throughput show after it: %s, want autoscale with a maximum of 6000 RU/s", tp)
	}
	if tp := a.throughput(t, "throughput", "set", "auto", "--autoscale-max", "8000"); !isAutoscale(tp, 8000) {
		t.Errorf("throughput set --autoscale-max 8000 answered %s, want autoscale with a maximum of 8000 RU/s", tp)
	}
	for i, p := range a.offerPuts() {
		if p.header.Get("x-ms-cosmos-migrate-offer-to-autopilot") != "" || p.header.Get("x-ms-cosmos-migrate-offer-to-manual-throughput") != "" {
			t.Errorf("replace %d carried a migration header: a number must not migrate", i+1)
		}
	}
	if m, ok := sdkThroughput(t, a.srv, "auto").AutoscaleMaxThroughput(); !ok || m != 8000 {
		t.Errorf("the SDK reads an autoscale maximum of %d (autoscale %v), want 8000", m, ok)
	}
}

func TestAutoscaleMaxOnAManualOfferIsRefusedNamingMigrate(t *testing.T) {
	a := newAccount(t)
	code, out, errOut := a.run(t, "throughput", "set", "items", "--autoscale-max", "4000")
	if code != 2 {
		t.Errorf("exit %d, want 2; stderr %q", code, errOut)
	}
	if !strings.Contains(errOut, "--migrate autoscale") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("stderr is not one line naming --migrate autoscale: %q", errOut)
	}
	if out != "" {
		t.Errorf("stdout %q, want nothing", out)
	}
	if n := len(a.offerPuts()); n != 0 {
		t.Errorf("%d replaces of the offer were sent, want none", n)
	}
	if tp := a.throughput(t, "throughput", "show", "items"); !isManual(tp, 400) {
		t.Errorf("the offer is now %s, want manual 400 RU/s as it was", tp)
	}
	// A migration takes no RU/s: the service picks them.
	code, _, errOut = a.run(t, "throughput", "set", "items", "--migrate", "autoscale", "--autoscale-max", "4000")
	if code != 2 || !strings.Contains(errOut, "--migrate takes no RU/s") {
		t.Errorf("--migrate with --autoscale-max: exit %d, stderr %q; want 2 and why", code, errOut)
	}
}

func TestMigrateChangesTheModeThroughTheServicesMigration(t *testing.T) {
	a := newAccount(t)
	if tp := a.throughput(t, "throughput", "set", "items", "--throughput", "3000"); !isManual(tp, 3000) {
		t.Fatalf("throughput set --throughput 3000 on a manual offer answered %s", tp)
	}

	// Manual → autoscale: the maximum is the service's pick, the manual RU/s here
	// (MAX(1,000, 3,000 RU/s, …) rounded to the nearest 1,000).
	if tp := a.throughput(t, "throughput", "set", "items", "--migrate", "autoscale"); !isAutoscale(tp, 3000) {
		t.Errorf("--migrate autoscale answered %s, want autoscale with a maximum of 3000 RU/s", tp)
	}
	puts := a.offerPuts()
	if len(puts) != 2 {
		t.Fatalf("%d replaces of the offer, want 2 (set, then the migration)", len(puts))
	}
	p := puts[1]
	content, _ := p.body["content"].(map[string]any)
	if p.header.Get("x-ms-cosmos-migrate-offer-to-autopilot") != "true" || p.header.Get("x-ms-cosmos-migrate-offer-to-manual-throughput") != "" {
		t.Errorf("the migration to autoscale was sent with migration headers %q / %q, want true / none",
			p.header.Get("x-ms-cosmos-migrate-offer-to-autopilot"), p.header.Get("x-ms-cosmos-migrate-offer-to-manual-throughput"))
	}
	if _, ok := content["offerAutopilotSettings"]; ok || content == nil {
		t.Errorf("the migration to autoscale sent content %v: the service wants no autopilot settings in it", content)
	}
	tp := sdkThroughput(t, a.srv, "items")
	if m, ok := tp.AutoscaleMaxThroughput(); !ok || m != 3000 {
		t.Errorf("after --migrate autoscale the SDK reads an autoscale maximum of %d (autoscale %v), want 3000", m, ok)
	}

	// Autoscale → manual: the RU/s are the autoscale maximum.
	if tp := a.throughput(t, "throughput", "set", "items", "--migrate", "manual"); !isManual(tp, 3000) {
		t.Errorf("--migrate manual answered %s, want manual 3000 RU/s", tp)
	}
	puts = a.offerPuts()
	if len(puts) != 3 {
		t.Fatalf("%d replaces of the offer, want 3", len(puts))
	}
	p = puts[2]
	content, _ = p.body["content"].(map[string]any)
	if p.header.Get("x-ms-cosmos-migrate-offer-to-manual-throughput") != "true" || p.header.Get("x-ms-cosmos-migrate-offer-to-autopilot") != "" {
		t.Errorf("the migration to manual was sent with migration headers %q / %q, want true / none",
			p.header.Get("x-ms-cosmos-migrate-offer-to-manual-throughput"), p.header.Get("x-ms-cosmos-migrate-offer-to-autopilot"))
	}
	if _, ok := content["offerAutopilotSettings"]; !ok {
		t.Errorf("the migration to manual sent content %v: the service wants autopilot settings in it", content)
	}
	tp = sdkThroughput(t, a.srv, "items")
	if n, ok := tp.ManualThroughput(); !ok || n != 3000 {
		t.Errorf("after --migrate manual the SDK reads %d RU/s (manual %v), want 3000", n, ok)
	}
	if _, ok := tp.AutoscaleMaxThroughput(); ok {
		t.Error("after --migrate manual the SDK still reads autoscale settings")
	}

	// Migrating to the mode the offer has sends nothing.
	code, _, errOut := a.run(t, "throughput", "set", "items", "--migrate", "manual")
	if code != 0 || !strings.Contains(errOut, "already manual") {
		t.Errorf("--migrate manual on a manual offer: exit %d, stderr %q; want 0 and that it is already manual", code, errOut)
	}
	if n := len(a.offerPuts()); n != 3 {
		t.Errorf("%d replaces of the offer, want still 3", n)
	}
}
