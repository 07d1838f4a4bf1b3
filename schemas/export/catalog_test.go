package export_test

import (
	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/schemas/export"
)

// catalog is trainfn's own: the kinds its table renders, and its config.
var catalog = export.NewCatalog(render.Kinds())
