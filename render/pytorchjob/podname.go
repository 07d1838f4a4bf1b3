package pytorchjob

import (
	"regexp"
	"strings"

	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/shell"
	"github.com/trainfn/trainfn/render/ynode"
)

// addressFlag is a flag whose value is a host: --local_addr, --master_addr,
// --rdzv-endpoint, --main_process_ip, --host.
var addressFlag = regexp.MustCompile(`(?i)^--?[a-z_-]*(addr|host|endpoint|ip)$`)

// podNameWarnings tell of containers that give their pod's name
// (fieldRef: metadata.name) as an address. training-operator named a pod
// as its Service, <job>-worker-<i>; a Job's pod is <job>-worker-<i>-<suffix>,
// which nothing resolves. resolvable is the name that does resolve, as a
// shell word the container can use instead.
func podNameWarnings(t *pod.Template, resolvable string) []result.Warning {
	var warnings []result.Warning
	for _, c := range t.Containers() {
		names := podNameVars(c)
		if len(names) == 0 {
			continue
		}
		for _, cmd := range shell.Script(c.Node(), c.Path()) {
			for i, w := range cmd.Args {
				flag, value, _ := strings.Cut(w.Text, "=")
				if value == "" && i > 0 {
					flag, value = cmd.Args[i-1].Text, w.Text
				}
				name := referenced(value, names)
				if name == "" || !addressFlag.MatchString(flag) {
					continue
				}
				warnings = append(warnings, result.Warning{Field: w.At, Message: name + " is the pod's name (metadata.name), given as an address to " + flag +
					": trainfn's Jobs name their pods <Job>-<index>-<suffix>, which nothing resolves; the pod's hostname resolves, " +
					"through a Service of its name, as training-operator's pod name did: use $(hostname), or, under hostNetwork, where the hostname is the node's, " + resolvable})
			}
		}
	}
	return warnings
}

// podNameVars are the container's variables read from metadata.name.
func podNameVars(c *pod.Container) []string {
	var names []string
	if env := c.Get("env"); env != nil {
		for _, e := range env.Content {
			ref := ynode.Get(ynode.Get(ynode.Get(e, "valueFrom"), "fieldRef"), "fieldPath")
			if ynode.ScalarValue(ref) == "metadata.name" {
				names = append(names, ynode.ScalarValue(ynode.Get(e, "name")))
			}
		}
	}
	return names
}

// referenced is the first of names the word expands: $NAME, ${NAME}, or
// the kubelet's $(NAME).
func referenced(word string, names []string) string {
	for _, n := range names {
		for _, ref := range []string{"${" + n + "}", "$(" + n + ")"} {
			if strings.Contains(word, ref) {
				return n
			}
		}
		if i := strings.Index(word, "$"+n); i >= 0 {
			rest := word[i+1+len(n):]
			if rest == "" || !isNameChar(rest[0]) {
				return n
			}
		}
	}
	return ""
}

func isNameChar(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}
