// Package supervise holds the POSIX shell that trainfn's container scripts
// run a command under. As a container's first process a shell ignores the
// kubelet's SIGTERM unless it traps it, and a command it waits for in the
// foreground never sees the signal: the command runs as a child, and the
// script passes the signal on.
package supervise

// Function sets $stopped and $child, traps TERM and INT, and defines
// supervise: it runs its arguments in the background and waits for their
// end, their exit status left in $code. A signal the script gets reaches
// the child, even one that came before the child started, and sets
// $stopped. The wait goes on while the child lives: a trapped signal ends
// a wait early.
const Function = `stopped=
child=
trap 'stopped=1; [ -n "$child" ] && kill -TERM "$child" 2>/dev/null' TERM INT
# supervise runs a command in the background, so that the kubelet's signal
# reaches it, and waits for its end.
supervise() {
  "$@" &
  child=$!
  [ -n "$stopped" ] && kill -TERM "$child" 2>/dev/null
  while :; do
    wait "$child"
    code=$?
    kill -0 "$child" 2>/dev/null || break
  done
}
`
