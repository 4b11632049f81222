// Package deploy holds no code: it is the home of shardjob's deployment
// files (Dockerfiles, Docker Compose, Kubernetes manifests, systemd units;
// see README.md in this directory) and of the test that checks them.
//
// The test parses the Compose file and every Kubernetes manifest, reads the
// systemd units and the Dockerfiles, and checks what would break a
// deployment: the expected services, build contexts and Dockerfiles that
// exist, no literal secrets, health probes on the real endpoints, a drain
// budget longer than the executor's drain timeout, and every flag,
// environment variable and config-file key that the files use exists in
// the binaries (it builds them with CGO_ENABLED=0 and reads their -h).
package deploy
