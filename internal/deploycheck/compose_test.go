package deploycheck_test

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeFile is what the tests read of deploy/compose.yaml.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       any               `yaml:"build"`
	User        string            `yaml:"user"`
	Entrypoint  []string          `yaml:"entrypoint"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
	ReadOnly    bool              `yaml:"read_only"`
	DependsOn   map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
}

// composeVar matches compose's ${NAME}, ${NAME:-default} and ${NAME:?error}.
var composeVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-?])([^}]*))?\}`)

// loadCompose reads deploy/compose.yaml with its variables set from vars,
// as `podman compose` does from deploy/.env: a ${NAME:?…} not in vars fails
// the test, a ${NAME:-default} takes its default.
func loadCompose(t *testing.T, vars map[string]string) composeFile {
	t.Helper()
	raw, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := composeVar.ReplaceAllStringFunc(string(raw), func(m string) string {
		g := composeVar.FindStringSubmatch(m)
		if v, ok := vars[g[1]]; ok && v != "" {
			return v
		}
		if g[2] == "?" {
			t.Errorf("compose.yaml needs %s, which the test did not set", g[1])
		}
		return g[3]
	})
	var c composeFile
	if err := yaml.Unmarshal([]byte(text), &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return c
}

// exampleEnv reads deploy/.env.example's NAME=value lines.
func exampleEnv(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(".env.example")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			out[k] = v
		}
	}
	return out
}

// TestComposeRunsTheConsoleBehindPgBouncerAndASynchronousStandby reads the
// compose file as docs/scale.md asks the database to be: the console's
// pooled URL through PgBouncer in transaction mode, its direct URL a
// multi-host one that follows a promotion, a standby the primary waits
// for, the console's root filesystem read-only; every file it mounts or
// builds from is there, and every variable it needs is in .env.example.
func TestComposeRunsTheConsoleBehindPgBouncerAndASynchronousStandby(t *testing.T) {
	example := exampleEnv(t)
	for _, m := range composeVar.FindAllStringSubmatch(mustRead(t, "compose.yaml"), -1) {
		if _, ok := example[m[1]]; !ok {
			t.Errorf("compose.yaml uses ${%s}, which .env.example does not list", m[1])
		}
	}
	c := loadCompose(t, map[string]string{"POSTGRES_PASSWORD": "p", "COUNTERSIGN_DB_PASSWORD": "c", "REPLICATION_PASSWORD": "r",
		"SESSION_KEYS": "k", "RECEIPT_SIGNING_KEY": "s", "FACTOR_KEY": "f"})
	for _, name := range []string{"postgres", "standby", "pgbouncer", "console"} {
		if _, ok := c.Services[name]; !ok {
			t.Fatalf("compose.yaml has no service %q", name)
		}
	}
	for name, s := range c.Services {
		for dep := range s.DependsOn {
			if _, ok := c.Services[dep]; !ok {
				t.Errorf("service %s depends on %q, which is not a service", name, dep)
			}
		}
		for _, v := range s.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if strings.HasPrefix(src, "./") {
				if fi, err := os.Stat(src); err != nil || fi.Mode()&0o111 == 0 && strings.HasSuffix(src, ".sh") {
					t.Errorf("service %s mounts %s: %v (want an executable script)", name, src, err)
				}
			} else if _, ok := c.Volumes[src]; !ok {
				t.Errorf("service %s mounts volume %q, which volumes: does not declare", name, src)
			}
		}
	}

	console := c.Services["console"]
	build, _ := console.Build.(map[string]any)
	if build == nil || build["context"] != ".." || build["dockerfile"] != "Containerfile" {
		t.Errorf("console build = %v, want the root Containerfile with the repository as context", console.Build)
	} else if _, err := os.Stat(filepath.Join("..", "Containerfile")); err != nil {
		t.Error(err)
	}
	if !console.ReadOnly {
		t.Error("the console's root filesystem is not read_only")
	}
	pooled := parseURL(t, console.Environment["DATABASE_URL"])
	if pooled.Host != "pgbouncer:6432" || pooled.User.Username() != "countersign" {
		t.Errorf("DATABASE_URL = %s, want the countersign role through pgbouncer:6432", pooled.Redacted())
	}
	direct := parseURL(t, console.Environment["DATABASE_DIRECT_URL"])
	if direct.Host != "postgres:5432,standby:5432" || direct.Query().Get("target_session_attrs") != "read-write" {
		t.Errorf("DATABASE_DIRECT_URL = %s, want postgres:5432,standby:5432 with target_session_attrs=read-write", direct.Redacted())
	}

	ini := mustRead(t, "pgbouncer/pgbouncer.ini")
	for _, want := range []string{"pool_mode = transaction", "countersign = host=postgres port=5432 dbname=countersign", "listen_port = 6432"} {
		if !strings.Contains(ini, want) {
			t.Errorf("pgbouncer.ini lacks %q", want)
		}
	}
	if b, _ := c.Services["pgbouncer"].Build.(string); b != "./pgbouncer" {
		t.Errorf("pgbouncer build = %v, want ./pgbouncer", c.Services["pgbouncer"].Build)
	}

	standby := c.Services["standby"]
	name := standby.Environment["STANDBY_NAME"]
	if got := c.Services["postgres"].Environment["SYNCHRONOUS_STANDBY_NAMES"]; name == "" || !strings.Contains(got, "("+name+")") {
		t.Errorf("the primary's SYNCHRONOUS_STANDBY_NAMES %q does not name the standby %q", got, name)
	}
	if !slices.Contains(standby.Entrypoint, "/standby.sh") || standby.Environment["PRIMARY_HOST"] != "postgres" {
		t.Errorf("standby entrypoint %v, primary %q: want /standby.sh cloning postgres", standby.Entrypoint, standby.Environment["PRIMARY_HOST"])
	}
	for file, wants := range map[string][]string{
		"postgres/primary-init.sh": {"ALTER SYSTEM SET synchronous_standby_names = :'standbys'", `--set standbys="$SYNCHRONOUS_STANDBY_NAMES"`,
			"ALTER ROLE countersign SET idle_in_transaction_session_timeout", "host replication replicator"},
		"postgres/standby.sh": {"application_name=$STANDBY_NAME", "standby.signal", "primary_slot_name = '$STANDBY_NAME'"},
	} {
		text := mustRead(t, file)
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", file, want)
			}
		}
	}
}

func parseURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	return u
}
