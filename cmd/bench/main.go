// Command bench is the benchmark suite (`make bench`): it measures the
// baselines (pgbench -N on the same PostgreSQL cluster, a bare Echo
// handler under the same load generator) and a real console process
// against them, prints each figure beside its baseline, ratio and target,
// and writes them all as JSON (see internal/bench and its README.md).
//
//	bench -bin bin/countersign                 # the full run, about 8 minutes on 2 cores
//	bench -bin bin/countersign -quick          # a smoke run over a tiny data set
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"countersign/internal/bench"
	"countersign/internal/chaos"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
}

func run() error {
	quick := flag.Bool("quick", false, "a short smoke run over a tiny data set (its figures are not comparable with a full run's)")
	bin := flag.String("bin", "", "built cmd/countersign binary; empty: build one")
	out := flag.String("out", "", "JSON file to write; empty: .data/bench/bench-<time>.json")
	keep := flag.Bool("keep", false, "after the figures, keep the console and its databases up until Ctrl-C (to inspect them)")
	only := flag.String("only", "", "comma-separated steps to run (pgbench, echo, writes, wide, confirm, longpoll, pages); empty: all. For profiling one step")
	debugAddr := flag.String("debug-addr", "", "the console's -debug-addr (Go's profiler at /debug/pprof/), e.g. 127.0.0.1:6060")
	flag.Parse()
	cfg := bench.Defaults(*quick)
	cfg.Keep = *keep
	cfg.DebugAddr = *debugAddr
	if *only != "" {
		cfg.Only = strings.Split(*only, ",")
	}
	cfg.Out = os.Stdout
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *bin == "" {
		dir, err := os.MkdirTemp("", "countersign-bench-bin-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if *bin, err = chaos.BuildConsole(dir); err != nil {
			return err
		}
	}
	cfg.Bin = *bin
	if *out == "" {
		*out = filepath.Join(".data", "bench", "bench-"+time.Now().UTC().Format("20060102T150405Z")+".json")
	}
	rep, err := bench.Run(ctx, cfg)
	if rep != nil {
		rep.PrintTable(os.Stdout)
		if werr := rep.WriteJSON(*out); werr != nil {
			return werr
		}
		fmt.Printf("\nwrote %s (%.0f s)\n", *out, rep.Seconds)
	}
	return err
}
