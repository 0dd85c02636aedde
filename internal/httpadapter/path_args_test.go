package httpadapter_test

import (
	"encoding/json"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/adapter/adaptertest"
	"countersign/internal/adapter/conformance"
)

// pathArgs reads, from a description file itself, the arguments each
// action and read tool places in a URL path: an "args.x" in a path before
// its "?", and the argument an object is read by when the object's get
// path holds {id}.
func pathArgs(t *testing.T, file string) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Objects map[string]struct {
			Get, List string
		}
		ReadTools []struct {
			Name, Param, Object, List, Path string
		} `json:"read_tools"`
		Actions []struct {
			Name                    string
			Target                  struct{ Kind, Param string }
			Request, DryRun, Verify *struct{ Path string }
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	argRef := regexp.MustCompile(`args\.([a-z_]+)`)
	inPath := func(p string) []string {
		p, _, _ = strings.Cut(p, "?")
		var out []string
		for _, m := range argRef.FindAllStringSubmatch(p, -1) {
			out = append(out, m[1])
		}
		return out
	}
	readByID := func(kind string) bool {
		get, _, _ := strings.Cut(d.Objects[kind].Get, "?")
		return strings.Contains(get, "{id}")
	}
	out := map[string][]string{}
	for _, r := range d.ReadTools {
		args := append(inPath(r.Path), inPath(d.Objects[r.List].List)...)
		if r.Object != "" && readByID(r.Object) {
			args = append(args, r.Param)
		}
		out["read "+r.Name] = args
	}
	for _, a := range d.Actions {
		var args []string
		for _, r := range []*struct{ Path string }{a.Request, a.DryRun, a.Verify} {
			if r != nil {
				args = append(args, inPath(r.Path)...)
			}
		}
		if readByID(a.Target.Kind) {
			args = append(args, a.Target.Param)
		}
		out["action "+a.Name] = args
	}
	return out
}

// TestPathArgumentsCannotMoveAPath: in every description file of
// testdata, every argument placed in a URL path — read from the file, not
// from the adapter — is refused at validation when it is a dot segment or
// holds a slash, as it is or percent-encoded, with a field error naming
// it, for actions (dry run) and read tools alike; the system sees no
// request at all. No file says which arguments these are: the adapter
// finds them.
func TestPathArgumentsCannotMoveAPath(t *testing.T) {
	t.Parallel()
	files := map[string]func() (adaptertest.Setup, adaptertest.Fixture){
		"testdata/shop-http.json": func() (adaptertest.Setup, adaptertest.Fixture) {
			return func(t *testing.T, tr http.RoundTripper) adaptertest.Backend {
				a, shop := connectFile(t, "testdata/shop-http.json", tr)
				return adaptertest.Backend{System: a, Effects: shop.Effects}
			}, fixture()
		},
		"testdata/shop-http-locales.json": func() (adaptertest.Setup, adaptertest.Fixture) {
			return func(t *testing.T, tr http.RoundTripper) adaptertest.Backend {
				a, shop := connectFile(t, "testdata/shop-http-locales.json", tr)
				return adaptertest.Backend{System: a, Effects: shop.Effects}
			}, fixture()
		},
		"testdata/example/pocketbase.json": func() (adaptertest.Setup, adaptertest.Fixture) {
			return pbBackend("testdata/example/pocketbase.json"), pbFixture()
		},
		"testdata/example/plans.json": func() (adaptertest.Setup, adaptertest.Fixture) { return plansBackend, plansFixture() },
		"testdata/example/payments.json": func() (adaptertest.Setup, adaptertest.Fixture) {
			return paymentsBackend, paymentsFixture()
		},
	}
	err := filepath.WalkDir("testdata", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == "fixtures" || d.Name() == "openapi") {
			return filepath.SkipDir
		}
		// A GraphQL file sends its arguments as variables in a JSON body,
		// never in a path (its endpoint is fixed).
		if filepath.ToSlash(path) == "testdata/example/graphql-shop.json" {
			return nil
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") && files[filepath.ToSlash(path)] == nil {
			t.Errorf("%s has no backend here: add it", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for file, backend := range files {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			setup, fix := backend()
			tr := &adaptertest.CountingTransport{}
			sys := setup(t, tr).System
			want := pathArgs(t, file)
			checked := 0
			try := func(what, arg string, call func(args json.RawMessage) error, base map[string]any) {
				for _, v := range conformance.PathValues {
					args := maps.Clone(base)
					args[arg] = v
					raw, _ := json.Marshal(args)
					before := tr.Requests()
					err := call(raw)
					if ae, ok := adapter.AsError(err); !ok || ae.Code != adapter.CodeInvalidArguments || ae.Fields[arg] == "" {
						t.Errorf("%s: %s = %q was not refused naming it: %v", what, arg, v, err)
					}
					if n := tr.Requests() - before; n != 0 {
						t.Errorf("%s: %s = %q: the system saw %d requests", what, arg, v, n)
					}
				}
				checked++
			}
			for _, a := range sys.Actions() {
				var base map[string]any
				for _, v := range fix.Every {
					if v.Action == a.Name {
						raw, _ := json.Marshal(v.Args)
						_ = json.Unmarshal(raw, &base)
					}
				}
				for _, arg := range want["action "+a.Name] {
					try("action "+a.Name, arg, func(raw json.RawMessage) error {
						_, err := sys.DryRun(t.Context(), fix.Principal, a.Name, raw)
						return err
					}, base)
				}
			}
			for _, r := range sys.ReadTools() {
				base := map[string]any{}
				if i := slices.IndexFunc(fix.Reads, func(fr adaptertest.Read) bool { return fr.Tool == r.Name }); i >= 0 {
					raw, _ := json.Marshal(fix.Reads[i].Args)
					_ = json.Unmarshal(raw, &base)
				}
				for _, arg := range want["read "+r.Name] {
					try("read "+r.Name, arg, func(raw json.RawMessage) error {
						_, err := sys.Read(t.Context(), fix.Principal, r.Name, raw)
						return err
					}, base)
				}
			}
			if checked == 0 {
				t.Errorf("%s places no argument in a path; this test checks nothing of it", file)
			}
		})
	}
}
