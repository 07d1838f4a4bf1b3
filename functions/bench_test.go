package functions

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/schemas"
	"github.com/trainfn/trainfn/test/jobstream"
)

// BenchmarkExpandJob validates, renders and stamps one job of each kind,
// its schemas already built: what each further job in a stream costs.
func BenchmarkExpandJob(b *testing.B) {
	docs, err := ReadDocuments([]string{Stdin}, bytes.NewReader(jobstream.Mixed(3)))
	if err != nil {
		b.Fatal(err)
	}
	validator := schemas.NewValidator()
	for _, doc := range docs {
		b.Run(doc.Node.GetKind()+"/"+doc.Node.GetApiVersion(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, diags := expandOne(doc, options.Default, validator); diags.HasErrors() {
					b.Fatal(diags)
				}
			}
		})
	}
}

// BenchmarkRenderStream reads, expands and writes streams of mixed jobs, as
// trainfn render does, without the process around it; the schemas are
// built by the first run.
func BenchmarkRenderStream(b *testing.B) {
	for _, n := range []int{1, 100} {
		stream := jobstream.Mixed(n)
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				docs, err := ReadDocuments([]string{Stdin}, bytes.NewReader(stream))
				if err != nil {
					b.Fatal(err)
				}
				out, diags := Expand(docs)
				if diags.HasErrors() {
					b.Fatal(diags)
				}
				if err := WriteDocuments(io.Discard, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
