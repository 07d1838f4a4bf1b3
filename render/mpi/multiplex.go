package mpi

// SSHConfigKey is the key of the job's ConfigMap that the launcher finds
// as its ssh client's own configuration, config in sshAuthMountPath (the
// user's ~/.ssh, which ssh reads before the image's /etc/ssh/ssh_config).
const SSHConfigKey = "ssh_config"

// SSHConfig has the launcher's ssh sessions to a worker share one
// connection: the wait's probe opens it, and mpirun's session, the
// launcher's word at the end and a rerun's probes ride on it, with no key
// exchange and no login of their own. Measured on a real node, a session's
// own start took 0.3 to 0.6 s, paid twice over by a launcher that waits for
// its workers before mpirun reaches them, and once more for its word. The
// connection's socket is in the launcher's scratch directory (RunDir, which
// only Launch's container mounts: ssh fails a session whose socket cannot
// be made), and it outlives its last session by a minute: long enough to
// carry mpirun's sessions once the wait ends, and the word once mpirun
// does. A socket whose connection is gone, left by a container that ended,
// is replaced by a new connection, as OpenSSH does under ControlMaster auto.
// The connection keeps the options of the wait's session that opened it
// (sshRun's): it ends after half a minute without an answer from the
// worker, and mpirun's sessions with it.
const SSHConfig = `# Rendered by trainfn: the launcher's ssh sessions to a worker share one
# connection, opened by its wait for the workers.
Host *
  ControlMaster auto
  ControlPath ` + RunDir + `/ssh-%C
  ControlPersist 60
`
