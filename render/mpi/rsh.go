package mpi

// Keys of the job's ConfigMap the Rsh launch mode adds, mounted on the
// workers at ConfigDir.
const (
	ServeRshKey = "serve_rsh.sh"
	RshdConfKey = "rshd.conf"
)

// RshPort is rsh's port, the shell service's (514/tcp).
const RshPort = 514

// RshAgent is mpirun's remote shell in the Rsh launch mode, from PATH: the
// rsh client takes its name from how it is called.
const RshAgent = "rsh"

// RshdConf runs in.rshd for each connection, as root (which rshd needs to
// switch to the remote user), under inetd. nowait.1024 lifts inetd's
// default of 256 connections a minute, past which it stops the service:
// the wait for workers and mpirun's launches come in bursts.
const RshdConf = "shell stream tcp nowait.1024 root /usr/sbin/in.rshd in.rshd\n"

// ServeRsh is the workers' command in the Rsh launch mode: it trusts
// every host for root (~root/.rhosts, which rshd reads for root alone)
// and for a user of the same name (/etc/hosts.equiv), then serves rsh
// through inetd in the foreground. rshd's own check is only that a peer
// connects from a privileged port: what may connect at all is the job's
// NetworkPolicy's to say.
const ServeRsh = `#!/bin/sh
# Rendered by trainfn: serves rsh to the job's launcher (the Rsh launch
# mode). Any host is trusted: the job's NetworkPolicy admits only the job's
# own pods to the rsh port.
set -e
for program in /usr/sbin/in.rshd /usr/sbin/inetd; do
  if [ ! -x "$program" ]; then
    echo "trainfn: the worker's image has no $program, which serves rsh (Debian's rsh-server and openbsd-inetd)" >&2
    exit 1
  fi
done
umask 077
echo '+ root' > ~root/.rhosts
umask 022
echo '+' > /etc/hosts.equiv
exec /usr/sbin/inetd -i ` + ConfigDir + "/" + RshdConfKey + `
`

// WaitForRsh is WaitForWorkers for the Rsh launch mode: it returns once
// every worker runs a command over rsh for the launcher's user. rsh gives
// back neither the remote command's exit status nor, from some servers, a
// failed login's, so the probe checks what the command printed.
var WaitForRsh = waitScript(overRsh)

var overRsh = remoteShell{
	accepts: "accepts rsh",
	accept:  "accept rsh",
	check: `if ! command -v ` + RshAgent + ` >/dev/null 2>&1; then
  echo "trainfn: the launcher's image has no rsh, which mpirun needs to start processes on the workers" >&2
  exit 1
fi
`,
	probe: `said=$(` + RshAgent + ` "$host" echo trainfn-rsh-ok </dev/null 2>&1); [ "$said" = trainfn-rsh-ok ] || { printf '%s' "${said:-no answer}"; false; }`,
}
