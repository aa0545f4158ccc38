//go:build race

package loki

// raceEnabled: sync.Pool drops items at random under the race detector.
const raceEnabled = true
