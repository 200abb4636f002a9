package textnorm

import (
	"strings"
	"testing"
)

// benchText mixes prose with the things Normalize rewrites.
var benchText = strings.Repeat("Dr. Smith paid $3.50 for 2 kg of apples on March 5, 2024, at 3:30 pm. "+
	"In 1984, about 12.5% of the 1,234 voters in St. Louis (see www.example.com) chose Mr. Jones; "+
	"the rest, e.g. the U.S. Army, stayed home until 5 p.m. and read Chapter IV of the 1990-1995 report.\n\n", 20)

// BenchmarkPipeline runs what callers run, per byte of input.
func BenchmarkPipeline(b *testing.B) {
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		for _, s := range Sentences(benchText) {
			SplitLong(Normalize(s), 400)
		}
	}
}

func BenchmarkSentences(b *testing.B) {
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		Sentences(benchText)
	}
}

func BenchmarkNormalize(b *testing.B) {
	sentences := Sentences(benchText)
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		for _, s := range sentences {
			Normalize(s)
		}
	}
}
