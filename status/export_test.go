package status

// JobOf is jobOf, for the tests of what a job's objects make of its
// status, which build the objects rather than list them.
var JobOf = jobOf

// LastFailure is the job's REASON, as the wide table shows it.
func LastFailure(j Job) string { return j.lastFailure }
