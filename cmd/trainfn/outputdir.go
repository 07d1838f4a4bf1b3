package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// kubectlFormats are the output formats of `kubectl get -o`. Out of that
// habit, `trainfn render pi.yaml -o yaml` asks for YAML, but render's -o is
// --output-dir: it would write a kustomization into a new directory named
// yaml, and print nothing.
var kubectlFormats = []string{
	"json", "yaml", "kyaml", "name", "wide",
	"go-template", "go-template-file", "template", "templatefile",
	"jsonpath", "jsonpath-as-json", "jsonpath-file",
	"custom-columns", "custom-columns-file",
}

// notAnOutputFormat refuses an output directory named as one of kubectl's
// output formats (yaml, or jsonpath=...), unless a directory of that name
// is there: one that render wrote before, which it may write again.
func notAnOutputFormat(dir string) error {
	format, _, _ := strings.Cut(dir, "=")
	if !slices.Contains(kubectlFormats, format) {
		return nil
	}
	if info, err := os.Stat(dir); err == nil && info.IsDir() {
		return nil
	}
	printed := "render prints YAML to standard output without -o"
	if format != "yaml" {
		printed += ", its only format"
	}
	return fmt.Errorf("-o %s: -o is --output-dir, the directory to write a kustomization into, not kubectl's output format: %s (for a directory named %s, write -o ./%s)",
		dir, printed, dir, dir)
}
