// Package waitfor holds the POSIX shell scripts init containers run to hold
// a pod back until the hosts it will dial resolve: a pod that starts first
// would fail to reach them, and could fail its way through its Job's
// backoff limit. They run in the main container's image, with whichever
// resolver it has, so they need no image of their own.
package waitfor

// resolves is a shell function that succeeds once its argument resolves.
const resolves = `resolves() {
  if command -v getent >/dev/null 2>&1; then getent hosts "$1" >/dev/null 2>&1
  elif command -v python3 >/dev/null 2>&1; then python3 -c 'import socket, sys; socket.getaddrinfo(sys.argv[1], None)' "$1" 2>/dev/null
  elif command -v python >/dev/null 2>&1; then python -c 'import socket, sys; socket.getaddrinfo(sys.argv[1], None)' "$1" 2>/dev/null
  else nslookup "$1" >/dev/null 2>&1
  fi
}
`

// HostScript waits until the host given as its first argument resolves. A
// pod does not wait for itself: its own name may resolve only once it is
// ready.
const HostScript = `[ "$(cat /proc/sys/kernel/hostname 2>/dev/null)" = "$1" ] && exit 0
` + resolves + `until resolves "$1"; do
  echo "waiting for $1 to resolve"
  sleep 2
done
`

// HostfileScript waits until every host of the MPI hostfile given as its
// first argument resolves, the pod's own name included: an MPI launcher
// that is a node too takes a name of the hostfile it cannot resolve for a
// remote host. Lines are "host slots=N" or "host:N".
const HostfileScript = resolves + `for host in $(sed -e 's/[: ].*//' "$1"); do
  until resolves "$host"; do
    echo "waiting for $host to resolve"
    sleep 1
  done
done
`
