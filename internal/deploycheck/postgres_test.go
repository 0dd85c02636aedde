package deploycheck_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"countersign/internal/slowtest"
	"countersign/store/pgcluster"
)

// TestThePostgresScriptsReplicateSynchronously runs compose.yaml's two
// PostgreSQL scripts on this machine's servers, with the compose file's
// settings: primary-init.sh on a new primary (then a reload, as the
// image's entrypoint restarts it), and standby.sh on an empty folder. The
// console's role logs in to its database with the idle-in-transaction
// timeout; a commit on the primary waits (SyncRep) until the standby has
// cloned the primary and streams as the synchronous standby it names, then
// returns.
func TestThePostgresScriptsReplicateSynchronously(t *testing.T) {
	slowtest.Skip(t, "starts a PostgreSQL primary and a standby")
	ctx := context.Background()
	compose := loadCompose(t, map[string]string{"POSTGRES_PASSWORD": "p", "COUNTERSIGN_DB_PASSWORD": randomHex(t, 8),
		"REPLICATION_PASSWORD": randomHex(t, 8), "SESSION_KEYS": "k", "RECEIPT_SIGNING_KEY": "s", "FACTOR_KEY": "f"})
	pg, standbyEnv := compose.Services["postgres"].Environment, compose.Services["standby"].Environment
	bin, err := pgcluster.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}

	// Durable: without it the cluster turns synchronous_commit off on its
	// command line, which would win over the script's ALTER SYSTEM.
	primary, err := pgcluster.Start(ctx, pgcluster.Config{DataDir: filepath.Join(openDir(t, "primary-"), "pg"), Durable: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = primary.Stop(context.Background()) })
	super := parseURL(t, primary.URL("postgres"))
	superPassword, _ := super.User.Password()
	initScript := exec.Command("bash", "postgres/primary-init.sh")
	initScript.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "PGDATA=" + primary.DataDir(), "POSTGRES_USER=postgres",
		"PGHOST=127.0.0.1", "PGPORT=" + strconv.Itoa(primary.Port()), "PGPASSWORD=" + superPassword,
		"COUNTERSIGN_DB_PASSWORD=" + pg["COUNTERSIGN_DB_PASSWORD"], "REPLICATION_PASSWORD=" + pg["REPLICATION_PASSWORD"],
		"SYNCHRONOUS_STANDBY_NAMES=" + pg["SYNCHRONOUS_STANDBY_NAMES"]}
	if out, err := initScript.CombinedOutput(); err != nil {
		t.Fatalf("primary-init.sh: %v\n%s", err, out)
	}
	superConn := connect(t, primary.URL("postgres"))
	if _, err := superConn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mustRead(t, filepath.Join(primary.DataDir(), "pg_hba.conf")), "host replication replicator all scram-sha-256") {
		t.Error("primary-init.sh did not let the replicator role replicate")
	}

	console := *super
	console.User = url.UserPassword("countersign", pg["COUNTERSIGN_DB_PASSWORD"])
	console.Path = "/countersign"
	conn := connect(t, console.String())
	var idle, names, syncCommit string
	if err := conn.QueryRow(ctx, `SELECT current_setting('idle_in_transaction_session_timeout'),
		current_setting('synchronous_standby_names'), current_setting('synchronous_commit')`).Scan(&idle, &names, &syncCommit); err != nil {
		t.Fatal(err)
	}
	if idle != "10s" || names != pg["SYNCHRONOUS_STANDBY_NAMES"] || syncCommit != "on" {
		t.Errorf("the console's session: idle_in_transaction_session_timeout %q, synchronous_standby_names %q, synchronous_commit %q; "+
			"want 10s, %q, on", idle, names, syncCommit, pg["SYNCHRONOUS_STANDBY_NAMES"])
	}

	// A commit now waits for the standby, which is not there yet.
	committed := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, "CREATE TABLE waited_for_the_standby (id int)")
		committed <- err
	}()
	waitFor(t, superConn, "SELECT count(*) > 0 FROM pg_stat_activity WHERE wait_event = 'SyncRep'", committed)

	standby := startStandby(t, bin, primary.Port(), standbyEnv)
	select {
	case err := <-committed:
		if err != nil {
			t.Fatalf("the commit that waited for the standby: %v", err)
		}
	case err := <-standby:
		t.Fatalf("standby.sh exited: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the commit still waits a minute after the standby started")
	}
	var state string
	if err := superConn.QueryRow(ctx, "SELECT sync_state FROM pg_stat_replication WHERE application_name = $1",
		standbyEnv["STANDBY_NAME"]).Scan(&state); err != nil || state != "sync" {
		t.Errorf("the standby %q on the primary: sync_state %q, %v; want sync", standbyEnv["STANDBY_NAME"], state, err)
	}
}

// startStandby runs standby.sh as the postgres OS user (when root) on an
// empty data folder, with its server on a free port; the returned channel
// says when it exits.
func startStandby(t *testing.T, bin string, primaryPort int, env map[string]string) <-chan error {
	t.Helper()
	dir := openDir(t, "standby-")
	// A standby may not allow fewer connections than its primary, which
	// pgcluster starts with 300.
	cmd := exec.Command("bash", "postgres/standby.sh", "-p", strconv.Itoa(freePort(t)), "-k", dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=300")
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "PGDATA=" + filepath.Join(dir, "data"), "PRIMARY_HOST=127.0.0.1",
		"PRIMARY_PORT=" + strconv.Itoa(primaryPort), "STANDBY_NAME=" + env["STANDBY_NAME"], "REPLICATION_PASSWORD=" + env["REPLICATION_PASSWORD"]}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGINT}
	if os.Geteuid() == 0 {
		uid, gid := postgresUser(t)
		if err := os.Chown(dir, int(uid), int(gid)); err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uid, Gid: gid, NoSetGroups: true}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Before the primary's stop: a fast shutdown of the standby first.
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case err := <-exited:
			if err != nil {
				t.Logf("standby.sh exit: %v", err)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("standby.sh said:\n%s", out.String())
		}
	})
	return exited
}

// waitFor polls query (one boolean) until it is true; a value on stop
// before that fails the test.
func waitFor(t *testing.T, conn *pgx.Conn, query string, stop <-chan error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var ok bool
		if err := conn.QueryRow(context.Background(), query).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		select {
		case err := <-stop:
			t.Fatalf("returned before %q held: %v", query, err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q never held", query)
		}
	}
}

func connect(t *testing.T, dbURL string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// openDir is a temporary folder the postgres OS user can enter.
func openDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "countersign-deploy-"+prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func postgresUser(t *testing.T) (uid, gid uint32) {
	t.Helper()
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatal(err)
	}
	uid64, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid64, _ := strconv.ParseUint(u.Gid, 10, 32)
	return uint32(uid64), uint32(gid64)
}

func freePort(t *testing.T) int {
	t.Helper()
	_, port, _ := strings.Cut(freeAddr(t), ":")
	n, _ := strconv.Atoi(port)
	return n
}
