package schemas

import (
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/test/testtool"
)

// FuzzValidate validates arbitrary YAML, seeded with every golden document.
// Whatever the document, validation accepts it or says why it does not, in
// a problem with a message each, leaves the document as it came (the front
// ends pass it on, or report at its lines), and decides the same every time,
// its template known or not.
func FuzzValidate(f *testing.F) {
	for _, doc := range testtool.GoldenDocuments(f) {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, text string) {
		doc, err := yaml.Parse(text)
		if err != nil || doc.YNode().Kind != yaml.MappingNode {
			// The front ends refuse other documents before validating.
			return
		}
		before, err := doc.String()
		if err != nil {
			return
		}
		if _, err := sharedValidator().schema(For(Kind{APIVersion: doc.GetApiVersion(), Kind: doc.GetKind()})); err != nil {
			// Only documents of a kind with a schema are validated.
			return
		}
		valid, problems := validate(doc)
		after, err := doc.String()
		require.NoError(t, err)
		require.Equal(t, before, after, "validation leaves the document as it came")

		if valid == nil {
			require.NotEmpty(t, problems, "a rejected document is rejected for a reason")
			for _, p := range problems {
				require.NotEmpty(t, p.Message, "a problem at %q says nothing", p.Field)
			}
		} else {
			require.Empty(t, problems, "an accepted document has no problems")
			require.NotNil(t, valid.Doc)
			_, err := valid.Doc.String()
			require.NoError(t, err, "the accepted document can be written")
			require.NoError(t, valid.Lookup("spec").Err())
		}

		// The second time records the template, the third has only the
		// name checked when the template was accepted.
		for range 2 {
			again, problemsAgain := validate(yaml.MustParse(text))
			require.Equal(t, valid == nil, again == nil, "the same document is accepted every time, or never")
			require.Equal(t, problems, problemsAgain, "the same document has the same problems every time")
		}
	})
}
