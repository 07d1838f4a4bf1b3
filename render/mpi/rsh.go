package mpi

import "strconv"

// Keys of the job's ConfigMap the Rsh launch mode adds, mounted on the
// workers at ConfigDir.
const (
	ServeRshKey = "serve_rsh.sh"
	RshdConfKey = "rshd.conf"
)

// RshPort is the port rshd serves, the shell service's, which the rsh
// client dials.
const RshPort = 514

// RshAgent is mpirun's remote shell in the Rsh launch mode, from PATH: the
// rsh client takes its name from how it is called.
const RshAgent = "rsh"

// RshdConf runs in.rshd for each connection, as root (which rshd needs to
// switch to the remote user). The port is a number, so that an image
// without /etc/services (netbase) serves it too; inetd listens on IPv4
// and IPv6 alike.
var RshdConf = strconv.Itoa(RshPort) + " stream tcp nowait root /usr/sbin/in.rshd in.rshd\n"

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
if [ "$(id -u)" != 0 ]; then
  echo "trainfn: the worker runs as uid $(id -u); rshd, which serves rsh, runs as root" >&2
  exit 1
fi
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
// failed login's, so the probe checks what the command printed; it has no
// connection timeout of its own, so timeout(1) bounds it where the image
// has it.
var WaitForRsh = waitScript(overRsh)

var overRsh = remoteShell{
	accepts: "accepts rsh",
	accept:  "accept rsh",
	// Debian's openssh-client offers itself as rsh through the
	// alternatives system: an image with ssh but no rsh-client has one.
	check: `if ! command -v ` + RshAgent + ` >/dev/null 2>&1; then
  echo "trainfn: the launcher's image has no rsh, which mpirun needs to start processes on the workers" >&2
  exit 1
fi
case $(readlink -f "$(command -v ` + RshAgent + `)") in
*ssh)
  echo "trainfn: the launcher's rsh is ssh (an alternative of openssh-client): install an rsh client (Debian's rsh-client)" >&2
  exit 1 ;;
esac
`,
	extra: `bounded=
command -v timeout >/dev/null 2>&1 && bounded="timeout 10"
`,
	probe: `said=$($bounded ` + RshAgent + ` "$host" echo trainfn-rsh-ok </dev/null 2>&1); [ "$said" = trainfn-rsh-ok ] || { printf '%s' "${said:-no answer}"; false; }`,
	// rsh uses a privileged source port, of which there are fewer than
	// a thousand: a few at a time leave the rest to mpirun.
	parallel:   "8",
	unresolved: `*"nknown host"*|*"not known"*|*"name resolution"*`,
	run:        `said=$($bounded ` + RshAgent + ` "$host" "$remote && echo trainfn-rsh-ok" </dev/null 2>&1); [ "${said##*trainfn-rsh-}" = ok ]`,
}
