// Package deploy holds what runs the console outside this repository: the
// image's build (deploy/image, the root Containerfile) and a compose file
// with PostgreSQL, a synchronous standby and PgBouncer. It has no Go code;
// its tests build the image, run its entrypoint and check the compose file
// (README.md beside this file).
package deploy
