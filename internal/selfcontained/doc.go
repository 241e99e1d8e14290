// Package selfcontained holds the test that keeps the repository standing on
// its own: no tracked file may point at a path outside the checkout, so a
// clone with nothing beside it builds, tests and reads the same as this one.
package selfcontained
