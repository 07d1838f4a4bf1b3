package status

import (
	"fmt"
)

// NoneFound is what the table says instead when no job exists, as kubectl
// says it (to standard error).
func NoneFound(namespace string) string {
	if namespace == "" {
		return "No trainfn jobs found."
	}
	return fmt.Sprintf("No trainfn jobs found in %s namespace.", namespace)
}
