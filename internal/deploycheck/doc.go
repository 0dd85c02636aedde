// Package deploycheck checks what runs the console outside this repository,
// kept in deploy/: the image's build (deploy/image, the root Containerfile)
// and a compose file with PostgreSQL, a synchronous standby and PgBouncer.
// It holds no code of the console; its tests build the image, run its entrypoint as the
// image's user and check the compose file (deploy/README.md). They run
// from deploy/, so their paths are that folder's.
package deploycheck
