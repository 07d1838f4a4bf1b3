package shell_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/shell"
)

func container(t testing.TB, text string) *yaml.Node {
	n, err := yaml.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return n.YNode()
}

func ExampleScript() {
	c, _ := yaml.Parse(`
command: [/bin/bash, -c]
args:
- |
  export PRTE_MCA_plm_ssh_args="-p 2222"
  mpirun --allow-run-as-root -mca plm_rsh_args "-p 2222" -np "$NP" \
    /app/train
`)
	for _, cmd := range shell.Script(c.YNode(), field.NewPath("container")) {
		fmt.Println(cmd.Name(), cmd.At)
		for _, a := range cmd.Assigns {
			fmt.Printf("  %s=%q\n", a.Name, a.Value.Text)
		}
		for _, w := range cmd.Args[1:] {
			fmt.Printf("  %q literal=%v\n", w.Text, w.Literal)
		}
	}
	// Output:
	// export container.args[0]
	//   PRTE_MCA_plm_ssh_args="-p 2222"
	// mpirun container.args[0]
	//   "--allow-run-as-root" literal=true
	//   "-mca" literal=true
	//   "plm_rsh_args" literal=true
	//   "-p 2222" literal=true
	//   "-np" literal=true
	//   "$NP" literal=false
	//   "/app/train" literal=true
}

func TestScript(t *testing.T) {
	for _, tt := range []struct {
		name, container string
		want            [][]string
	}{
		{"exec form", `command: [mpirun, -mca, plm_rsh_args, "-p 2222", "$(PORT)"]`,
			[][]string{{"mpirun", "-mca", "plm_rsh_args", "-p 2222", "$(PORT)?"}}},
		{"args only", `args: [sshd, -p, "2222"]`, [][]string{{"sshd", "-p", "2222"}}},
		{"sh -c in command", `command: [sh, -c, "mkdir -p /run/sshd; /usr/sbin/sshd -D -p 2222"]`,
			[][]string{{"mkdir", "-p", "/run/sshd"}, {"/usr/sbin/sshd", "-D", "-p", "2222"}}},
		{"bash -lc in command, script in args", `{command: [/bin/bash, -lc], args: ["a 'b c' && d \"e $F\""]}`,
			[][]string{{"a", "b c"}, {"d", "e $F?"}}},
		{"command substitution", `command: [sh, -c, "torchrun --node_rank $(hostname | cut -d- -f4)"]`,
			[][]string{{"torchrun", "--node_rank", "$(hostname | cut -d- -f4)?"}, {"hostname"}, {"cut", "-d-", "-f4"}}},
		{"escaped space and line continuation", "command: [sh, -c, \"a b\\\\ c \\\\\\n d\"]",
			[][]string{{"a", "b c", "d"}}},
		{"no shell, no -c", `command: [bash, script.sh]`, [][]string{{"bash", "script.sh"}}},
		{"a script that does not parse", `command: [sh, -c, "if then"]`, nil},
		{"nothing", `image: x`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got [][]string
			for _, c := range shell.Script(container(t, tt.container), field.NewPath("c")) {
				var words []string
				for _, w := range c.Args {
					if !w.Literal {
						w.Text += "?"
					}
					words = append(words, w.Text)
				}
				got = append(got, words)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestAssigns(t *testing.T) {
	cs := shell.Script(container(t, `command: [sh, -c, "export A=1 B=\"$C\" D; E=2 run"]`), field.NewPath("c"))
	at := field.NewPath("c").Child("command").Index(2)
	assert.Equal(t, []shell.Assign{{"A", shell.Word{"1", true, at}}, {"B", shell.Word{"$C", false, at}}}, cs[0].Assigns)
	assert.Equal(t, "run", cs[1].Name())
	assert.Equal(t, []shell.Assign{{"E", shell.Word{"2", true, at}}}, cs[1].Assigns)
}
