// Package layers states which of trainfn's packages may import which, and
// its test holds the module to it. trainfn is layered, each layer importing
// only those below it, so that a layer can be read, tested and changed
// without the ones above:
//
//	schemas ← render ← functions ← cmd
//
// render/handoff is the contract between the render and what reads its
// output in the cluster: the reconciler and `trainfn status` import it,
// and nothing else of the render, nor the front end. status/phase, the
// rules of a job's phase, is shared by status and the reconciler.
// kubeclient reaches the API server for trainfn's commands that talk to a
// cluster: `trainfn status`, and changedjobs (`trainfn delete-changed`),
// which reads only the render digest on a Job's pod template.
//
// A package named for testing (rendertest, functionstest) may also use the
// test harnesses under test/. Test files are not held to the layers: a
// kind's golden cases run through the front end, as users run trainfn.
package layers

import "strings"

// Module is the module whose packages are layered.
const Module = "github.com/trainfn/trainfn"

// rule is what the packages under a folder may import of the module.
type rule struct {
	// under is the folder, relative to the module: its packages and those
	// below it.
	under string
	// may are the folders whose packages it may import, its own included.
	may []string
}

// rules hold the product's packages, most specific first; packages no
// rule names (test/, hack/, examples/, docs/, charts/) may import any.
var rules = []rule{
	{"schemas", []string{"schemas"}},
	{"render/handoff", []string{"render/handoff"}},
	{"render", []string{"render", "schemas"}},
	{"functions", []string{"functions", "render", "schemas"}},
	{"kubeclient", []string{"kubeclient"}},
	{"status", []string{"status", "kubeclient", "render/handoff"}},
	{"changedjobs", []string{"changedjobs", "render/handoff"}},
	{"reconciler", []string{"reconciler", "status/phase", "render/handoff"}},
	{"cmd", []string{"cmd", "functions", "render", "schemas", "status", "kubeclient", "changedjobs", "reconciler"}},
}

// testHarnesses may be imported by packages named for testing.
const testHarnesses = "test"

// Allowed tells whether package from may import package to, both given
// relative to the module; a reason says why not.
func Allowed(from, to string) (ok bool, reason string) {
	r, ruled := ruleOf(from)
	if !ruled {
		return true, ""
	}
	for _, folder := range r.may {
		if within(to, folder) {
			return true, ""
		}
	}
	if isTestHelper(from) && within(to, testHarnesses) {
		return true, ""
	}
	return false, "the packages under " + r.under + "/ may import only those under " + strings.Join(r.may, "/, ") + "/"
}

func ruleOf(pkg string) (rule, bool) {
	for _, r := range rules {
		if within(pkg, r.under) {
			return r, true
		}
	}
	return rule{}, false
}

// within tells whether pkg is folder or below it.
func within(pkg, folder string) bool {
	return pkg == folder || strings.HasPrefix(pkg, folder+"/")
}

// isTestHelper tells whether a package is named for testing, as Go's own
// httptest and iotest are.
func isTestHelper(pkg string) bool {
	return strings.HasSuffix(pkg[strings.LastIndex(pkg, "/")+1:], "test")
}
