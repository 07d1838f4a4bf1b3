package allocator

// Resources are amounts of the resources a worker requests and a node
// offers. Three fields rather than a map of names: these are the ones that
// decide where a DI-engine worker fits, and a struct is comparable and
// cannot hold a misspelt name.
type Resources struct {
	// MilliCPU is CPU in thousandths of a core.
	MilliCPU int64
	// Memory is in bytes.
	Memory int64
	// GPU is whole devices.
	GPU int64
}

// FitsIn reports whether r fits in room, resource by resource.
func (r Resources) FitsIn(room Resources) bool {
	return r.MilliCPU <= room.MilliCPU && r.Memory <= room.Memory && r.GPU <= room.GPU
}

// Add returns r plus o.
func (r Resources) Add(o Resources) Resources {
	return Resources{MilliCPU: r.MilliCPU + o.MilliCPU, Memory: r.Memory + o.Memory, GPU: r.GPU + o.GPU}
}

// Sub returns r minus o; a component may go negative, and then nothing fits.
func (r Resources) Sub(o Resources) Resources {
	return Resources{MilliCPU: r.MilliCPU - o.MilliCPU, Memory: r.Memory - o.Memory, GPU: r.GPU - o.GPU}
}
