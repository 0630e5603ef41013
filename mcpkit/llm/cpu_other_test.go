//go:build !unix

package llm

import "time"

// processCPU returns 0 where getrusage is missing.
func processCPU() time.Duration { return 0 }
