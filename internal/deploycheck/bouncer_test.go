package deploycheck_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"countersign/store/dbtest"
	"countersign/store/pgcluster"
)

// composeDatabase is the console's side of compose.yaml's database on this
// machine: an empty database owned by the countersign role (with the
// timeout primary-init.sh sets on it), served by PgBouncer run with
// pgbouncer/pgbouncer.ini. It returns the compose file's console
// environment with its hosts pointed there: DATABASE_URL through the
// bouncer (its database name kept), DATABASE_DIRECT_URL at the server.
func composeDatabase(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	password := randomHex(t, 8)
	compose := loadCompose(t, map[string]string{"POSTGRES_PASSWORD": randomHex(t, 8), "COUNTERSIGN_DB_PASSWORD": password,
		"REPLICATION_PASSWORD": randomHex(t, 8), "SESSION_KEYS": randomHex(t, 32), "RECEIPT_SIGNING_KEY": randomSeed(t), "FACTOR_KEY": randomSeed(t)})

	bare := parseURL(t, dbtest.NewBareURL(t))
	dbName := strings.TrimPrefix(bare.Path, "/")
	super, err := pgx.Connect(ctx, bare.String())
	if err != nil {
		t.Fatal(err)
	}
	defer super.Close(ctx)
	// The role is the cluster's, which this test binary alone uses.
	for _, stmt := range []string{
		fmt.Sprintf("CREATE ROLE countersign LOGIN PASSWORD '%s'", password),
		"ALTER ROLE countersign SET idle_in_transaction_session_timeout = '10s'",
		"ALTER DATABASE " + pgx.Identifier{dbName}.Sanitize() + " OWNER TO countersign",
	} {
		if _, err := super.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", strings.SplitN(stmt, " PASSWORD", 2)[0], err)
		}
	}
	bouncer := startComposeBouncer(t, bare.Host, dbName, password)

	var env []string
	for k, v := range compose.Services["console"].Environment {
		switch k {
		case "DATABASE_URL":
			u := parseURL(t, v)
			u.Host = bouncer
			v = u.String()
		case "DATABASE_DIRECT_URL":
			u := parseURL(t, v)
			u.Host, u.Path = bare.Host, "/"+dbName
			v = u.String()
		}
		env = append(env, k+"="+v)
	}
	return env
}

// startComposeBouncer runs Debian's PgBouncer with pgbouncer/pgbouncer.ini,
// changed only where compose's network and paths are not this machine's:
// its database served from dbName at server, a loopback address, the user
// list as pgbouncer/start writes it. It returns the bouncer's address.
func startComposeBouncer(t *testing.T, server, dbName, password string) string {
	t.Helper()
	bin, err := pgcluster.FindBouncer()
	if err != nil {
		t.Fatal(err)
	}
	dir := openDir(t, "pgbouncer-")
	host, port, _ := net.SplitHostPort(server)
	addr := freeAddr(t)
	_, listen, _ := net.SplitHostPort(addr)
	ini := mustRead(t, "pgbouncer/pgbouncer.ini")
	for from, to := range map[string]string{
		"countersign = host=postgres port=5432 dbname=countersign": "countersign = host=" + host + " port=" + port + " dbname=" + dbName,
		"listen_addr = 0.0.0.0":         "listen_addr = 127.0.0.1",
		"listen_port = 6432":            "listen_port = " + listen,
		"auth_file = /tmp/userlist.txt": "auth_file = " + filepath.Join(dir, "userlist.txt"),
	} {
		if !strings.Contains(ini, from) {
			t.Fatalf("pgbouncer.ini lacks %q", from)
		}
		ini = strings.Replace(ini, from, to, 1)
	}
	if !strings.Contains(mustRead(t, "pgbouncer/start"), `printf '"countersign" "%s"\n' "$COUNTERSIGN_DB_PASSWORD" > /tmp/userlist.txt`) {
		t.Fatal("pgbouncer/start no longer writes the user list the test writes")
	}
	files := map[string]string{"pgbouncer.ini": ini, "userlist.txt": fmt.Sprintf("\"countersign\" \"%s\"\n", password)}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGINT}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		// PgBouncer refuses to run as root: as the postgres OS user then.
		if os.Geteuid() == 0 {
			uid, gid := postgresUser(t)
			if err := os.Chown(path, int(uid), int(gid)); err != nil {
				t.Fatal(err)
			}
			cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uid, Gid: gid, NoSetGroups: true}
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-exited:
			if err != nil && t.Failed() {
				t.Logf("pgbouncer exit: %v\n%s", err, out.String())
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			return addr
		}
		select {
		case err := <-exited:
			t.Fatalf("pgbouncer with pgbouncer.ini exited: %v\n%s", err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgbouncer with pgbouncer.ini did not listen within 20s:\n%s", out.String())
		}
	}
}
