package schemas

import (
	"context"
	"fmt"

	"cuelang.org/go/mod/modconfig"
	"cuelang.org/go/mod/modfile"
	"cuelang.org/go/mod/module"
)

// noRegistry keeps schema loading offline: the embedded module depends on no
// other CUE module, so any registry request is a bug in the schemas.
type noRegistry struct{}

var _ modconfig.Registry = noRegistry{}

func (noRegistry) ModFile(_ context.Context, mv module.Version) (*modfile.File, error) {
	return nil, fmt.Errorf("schemas depend on no CUE module, yet %v was requested", mv)
}

func (noRegistry) Fetch(_ context.Context, mv module.Version) (module.SourceLoc, error) {
	return module.SourceLoc{}, fmt.Errorf("schemas depend on no CUE module, yet %v was requested", mv)
}

func (noRegistry) ModuleVersions(_ context.Context, mpath string) ([]string, error) {
	return nil, fmt.Errorf("schemas depend on no CUE module, yet %s was requested", mpath)
}
