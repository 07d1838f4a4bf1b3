// Package shell reads what a container will run from its command and args:
// the commands of a shell line (sh -c "..."), or the one command of the
// exec form, each with its words and the variables it assigns. A render
// warns from what it finds; it never runs anything, and a word whose value
// only the running shell knows ($PORT, $(hostname)) is marked as such.
package shell

import (
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"mvdan.cc/sh/v3/syntax"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Word is a word of a command, as the program it runs receives it.
type Word struct {
	// Text is the word without its quotes; where a part of it is only
	// known at run time, that part is left as written.
	Text string
	// Literal tells whether Text is what the program receives: no
	// expansion, no substitution.
	Literal bool
	// At is the command or args item the word is written in.
	At *field.Path
}

// Assign is a variable a command line sets: NAME=value before a command,
// or export NAME=value.
type Assign struct {
	Name  string
	Value Word
}

// Command is one simple command of a container's command line, and the
// command or args item it is written in.
type Command struct {
	Args    []Word
	Assigns []Assign
	At      *field.Path
}

// Name is the program a command runs, without its folder: "mpirun" for
// /usr/bin/mpirun.
func (c Command) Name() string {
	if len(c.Args) == 0 {
		return ""
	}
	return path.Base(c.Args[0].Text)
}

// Script is a container's command line: its command and args, and the
// field path of the container.
func Script(container *yaml.Node, at *field.Path) []Command {
	var items []item
	for _, name := range []string{"command", "args"} {
		n := yaml.NewRNode(container).Field(name)
		if n == nil || n.Value.YNode().Kind != yaml.SequenceNode {
			continue
		}
		for i, w := range n.Value.YNode().Content {
			items = append(items, item{w.Value, at.Child(name).Index(i)})
		}
	}
	if len(items) == 0 {
		return nil
	}
	if script, ok := shellLine(items); ok {
		return parse(script.text, script.at)
	}
	// The exec form: one command, whose words the kubelet passes as they
	// are but for $(VAR) references to the container's environment.
	c := Command{At: items[0].at}
	for _, it := range items {
		c.Args = append(c.Args, Word{Text: it.text, Literal: !strings.Contains(it.text, "$("), At: it.at})
	}
	return []Command{c}
}

type item struct {
	text string
	at   *field.Path
}

// shells run their -c argument as a script.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "ash": true, "zsh": true, "ksh": true}

// shellLine finds the script of sh -c SCRIPT (or -lc, -ec, ...).
func shellLine(items []item) (item, bool) {
	if !shells[path.Base(items[0].text)] {
		return item{}, false
	}
	for i := 1; i < len(items)-1; i++ {
		flag := items[i].text
		if !strings.HasPrefix(flag, "-") {
			return item{}, false
		}
		if strings.Contains(flag, "c") && !strings.HasPrefix(flag, "--") {
			return items[i+1], true
		}
	}
	return item{}, false
}

// parse reads a script's simple commands. A script bash cannot parse is
// read as nothing: the render has no more to say of it than a shell would.
func parse(script string, at *field.Path) []Command {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return nil
	}
	var commands []Command
	syntax.Walk(f, func(node syntax.Node) bool {
		switch n := node.(type) {
		case *syntax.CallExpr:
			c := Command{At: at}
			for _, a := range n.Assigns {
				c.Assigns = append(c.Assigns, assign(a, at))
			}
			for _, w := range n.Args {
				c.Args = append(c.Args, word(w, at))
			}
			commands = append(commands, c)
		case *syntax.DeclClause:
			if n.Variant.Value == "export" {
				c := Command{At: at, Args: []Word{{Text: "export", Literal: true, At: at}}}
				for _, a := range n.Args {
					if !a.Naked {
						c.Assigns = append(c.Assigns, assign(a, at))
					}
				}
				commands = append(commands, c)
			}
		}
		return true
	})
	return commands
}

func assign(a *syntax.Assign, at *field.Path) Assign {
	var name string
	if a.Name != nil {
		name = a.Name.Value
	}
	if a.Value == nil {
		return Assign{Name: name, Value: Word{Literal: true, At: at}}
	}
	return Assign{Name: name, Value: word(a.Value, at)}
}

// word unquotes a word; any part that is not plain text makes it
// non-literal, and is kept as written.
func word(w *syntax.Word, at *field.Path) Word {
	var b strings.Builder
	literal := true
	var add func(parts []syntax.WordPart, quoted bool)
	add = func(parts []syntax.WordPart, quoted bool) {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit:
				if quoted {
					b.WriteString(p.Value)
				} else {
					b.WriteString(unescape(p.Value))
				}
			case *syntax.SglQuoted:
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				add(p.Parts, true)
			default:
				literal = false
				var s strings.Builder
				_ = syntax.NewPrinter().Print(&s, p)
				b.WriteString(s.String())
			}
		}
	}
	add(w.Parts, false)
	return Word{Text: b.String(), Literal: literal, At: at}
}

// unescape drops the backslashes of an unquoted word: \  is a space.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
