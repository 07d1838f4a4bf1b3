package phase_test

import (
	"github.com/trainfn/trainfn/status/internal/fixture"
)

// The builders are package fixture's, which the tests of package status
// share; see there.
var (
	indexedJob  = fixture.IndexedJob
	with        = fixture.With
	condition   = fixture.Condition
	statefulSet = fixture.StatefulSet
	jobPod      = fixture.JobPod
	setPod      = fixture.SetPod
	jobPods     = fixture.JobPods
	setPods     = fixture.SetPods
	objects     = fixture.Objects
	jobs        = fixture.Jobs
	sets        = fixture.Sets
	pods        = fixture.Pods

	unschedulable      = fixture.Unschedulable
	gated              = fixture.Gated
	creating           = fixture.Creating
	runningReady       = fixture.RunningReady
	runningNotReady    = fixture.RunningNotReady
	restarted          = fixture.Restarted
	initializing       = fixture.Initializing
	succeeded          = fixture.Succeeded
	failed             = fixture.Failed
	deleting           = fixture.Deleting
	exitedAndRestarted = fixture.ExitedAndRestarted
)
