package functions

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/test/testtool"
)

// FuzzRenderStream runs trainfn render on arbitrary bytes, seeded with the
// golden inputs. A stream renders the same every time; a render that fails
// prints nothing and says why in every error; one that succeeds prints a
// stream trainfn reads again, and since every job in it is expanded,
// rendering it again changes nothing.
func FuzzRenderStream(f *testing.F) {
	for _, c := range testtool.GoldenCases(f) {
		f.Add(c.Input)
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		first := renderBytes(t, stream)
		require.Equal(t, first, renderBytes(t, stream), "the same stream renders the same every time")
		if first.failed {
			return
		}
		again := renderBytes(t, []byte(first.output))
		require.False(t, again.failed, "the rendered stream renders again: %s%s", again.readError, again.diagnostics)
		require.Equal(t, first.output, again.output, "rendering the rendered stream changes nothing")
	})
}

// streamRender is what trainfn render prints and reports.
type streamRender struct {
	output, diagnostics, readError string
	failed                         bool
}

func renderBytes(t *testing.T, stream []byte) streamRender {
	t.Helper()
	docs, err := ReadDocuments([]string{Stdin}, bytes.NewReader(stream))
	if err != nil {
		require.NotEmpty(t, err.Error())
		return streamRender{readError: err.Error(), failed: true}
	}
	objects, diags := Expand(docs)
	requireMessages(t, diags)
	r := streamRender{diagnostics: diags.Error(), failed: diags.HasErrors()}
	if r.failed {
		require.Nil(t, objects, "a failed render outputs nothing, not part of it")
		return r
	}
	for _, d := range docs {
		if !isConfig(d.Node) {
			require.NotEmpty(t, objects, "a stream of objects renders to objects")
			break
		}
	}
	var out bytes.Buffer
	require.NoError(t, WriteDocuments(&out, objects))
	r.output = out.String()
	return r
}

// requireMessages checks that every error says what is wrong.
func requireMessages(t *testing.T, diags Diagnostics) {
	t.Helper()
	for _, d := range diags {
		if d.Severity == Error {
			require.NotEmpty(t, d.Message, "an error says nothing: %s", d)
		}
	}
}

// FuzzResourceList runs trainfn as a KRM function on arbitrary bytes as
// its standard input, seeded with the golden cases as ResourceLists, as
// kustomize passes them (no paths) and as kpt does (every item's file and
// index). The function answers the same every time. Input kyaml cannot
// read gets no answer but an error; any other gets an answer of the same
// shape (a ResourceList for a ResourceList; kyaml also reads and writes a
// plain stream of objects). On success no result is an error and no job
// spec is left unexpanded; on failure every error is a result with a
// message, and the items are returned as they came: nothing is half done.
func FuzzResourceList(f *testing.F) {
	for _, c := range testtool.GoldenCases(f) {
		f.Add(goldenResourceList(f, c, ""))
		f.Add(goldenResourceList(f, c, c.Name+".yaml"))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := runFunctionOn(in, Function{})
		againOut, againErr := runFunctionOn(in, Function{})
		require.Equal(t, out, againOut, "the same input gets the same answer every time")
		require.Equal(t, errorText(err), errorText(againErr), "the same input fails the same every time")

		var diags Diagnostics
		if err != nil && !errors.As(err, &diags) {
			require.NotEmpty(t, err.Error())
			require.Empty(t, out, "input that cannot be read gets no answer")
			return
		}
		// A function that changes nothing answers with the input as kyaml
		// writes it back.
		unchanged, err := runFunctionOn(in, framework.ResourceListProcessorFunc(func(*framework.ResourceList) error { return nil }))
		require.NoError(t, err)
		input, answer := readAnswer(t, unchanged), readAnswer(t, out)
		require.Equal(t, input.wrapping, answer.wrapping, "the answer has the shape of the input:\n%s", out)

		if diags == nil {
			for _, r := range answer.results {
				require.NotEqual(t, framework.Error, r.Severity, "a run that succeeds reports no error: %s", r.Message)
			}
			requireJobsExpanded(t, input, answer)
			return
		}
		require.True(t, diags.HasErrors(), "a run fails on errors only")
		requireMessages(t, diags)
		if answer.wrapping == kio.ResourceListKind {
			errorResults := 0
			for _, r := range answer.results {
				if r.Severity == framework.Error {
					require.NotEmpty(t, r.Message, "an error result says nothing")
					errorResults++
				}
			}
			require.Equal(t, countErrors(diags), errorResults, "every error is a result")
		}
		require.Equal(t, input.items, answer.items, "a failed run leaves the items as they came")
	})
}

// answered is what the function wrote, read back.
type answered struct {
	wrapping       string
	items          []string
	functionConfig *yaml.RNode
	results        framework.Results
}

func readAnswer(t *testing.T, out string) answered {
	t.Helper()
	reader := &kio.ByteReader{Reader: strings.NewReader(out), OmitReaderAnnotations: true, WrapBareSeqNode: true}
	nodes, err := reader.Read()
	require.NoError(t, err, "the answer reads back:\n%s", out)
	a := answered{wrapping: reader.WrappingKind, functionConfig: reader.FunctionConfig}
	for _, n := range nodes {
		a.items = append(a.items, n.MustString())
	}
	if reader.Results != nil {
		require.NoError(t, reader.Results.YNode().Decode(&a.results), "results are framework.Results:\n%s", out)
	}
	return a
}

func countErrors(diags Diagnostics) int {
	n := 0
	for _, d := range diags {
		if d.Severity == Error {
			n++
		}
	}
	return n
}

// requireJobsExpanded checks that no job spec is among the answer's items,
// and that there are items when the input had a job spec to render, among
// its items or as the function config.
func requireJobsExpanded(t *testing.T, input, answer answered) {
	t.Helper()
	for _, item := range answer.items {
		require.False(t, isJobSpec(yaml.MustParse(item)), "a job spec is left unexpanded:\n%s", item)
	}
	jobs := input.functionConfig != nil && isJobSpec(input.functionConfig)
	for _, item := range input.items {
		jobs = jobs || isJobSpec(yaml.MustParse(item))
	}
	if jobs {
		require.NotEmpty(t, answer.items, "a job spec renders to objects")
	}
}

// goldenResourceList wraps a golden case's input in a ResourceList, its
// config as the function config; with a path, every item says it came
// from there, as kpt says.
func goldenResourceList(t testing.TB, c testtool.GoldenCase, path string) []byte {
	t.Helper()
	reader := &kio.ByteReader{Reader: bytes.NewReader(c.Input), OmitReaderAnnotations: path == ""}
	if path != "" {
		reader.SetAnnotations = map[string]string{kioutil.PathAnnotation: path}
	}
	items, err := reader.Read()
	require.NoError(t, err, c.Name)
	writer := kio.ByteWriter{Writer: &bytes.Buffer{}, KeepReaderAnnotations: true,
		WrappingAPIVersion: kio.ResourceListAPIVersion, WrappingKind: kio.ResourceListKind}
	if c.Config != nil {
		writer.FunctionConfig = yaml.MustParse(string(c.Config))
	}
	require.NoError(t, writer.Write(items), c.Name)
	return writer.Writer.(*bytes.Buffer).Bytes()
}

func runFunctionOn(in []byte, p framework.ResourceListProcessor) (string, error) {
	var out bytes.Buffer
	err := framework.Execute(p, &kio.ByteReadWriter{Reader: bytes.NewReader(in), Writer: &out, KeepReaderAnnotations: true})
	return out.String(), err
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
