package cliflags

import (
	"flag"
	"fmt"
)

// group is a heading of the usage (-h) and the flags defined after it.
type group struct {
	title string
	names []string
}

// Group starts a heading of the usage that -h prints: the flags defined
// after it, up to the next Group, are listed under title (in the order
// of their names, as the flag package lists them). Flags defined before
// the first Group (--config) are listed first, without a heading. A Set
// without a Group prints the flag package's usage.
func (s *Set) Group(title string) {
	if s.groups == nil {
		s.VisitAll(func(f *flag.Flag) { s.seen[f.Name] = true })
		s.FlagSet.Usage = s.groupedUsage
	}
	s.closeGroup()
	s.groups = append(s.groups, group{title: title})
}

// closeGroup files the flags defined since the last look under the
// current group.
func (s *Set) closeGroup() {
	if len(s.groups) == 0 {
		return
	}
	g := &s.groups[len(s.groups)-1]
	s.VisitAll(func(f *flag.Flag) {
		if !s.seen[f.Name] {
			s.seen[f.Name] = true
			g.names = append(g.names, f.Name)
		}
	})
}

// groupedUsage prints the flags under their headings, each flag as the
// flag package prints it.
func (s *Set) groupedUsage() {
	s.closeGroup()
	out := s.Output()
	fmt.Fprintf(out, "Usage of %s:\n", s.Name())
	var first []string
	s.VisitAll(func(f *flag.Flag) {
		if !s.inGroup(f.Name) {
			first = append(first, f.Name)
		}
	})
	s.printFlags(first)
	for _, g := range s.groups {
		if len(g.names) > 0 {
			fmt.Fprintf(out, "\n%s:\n", g.title)
			s.printFlags(g.names)
		}
	}
}

func (s *Set) inGroup(name string) bool {
	for _, g := range s.groups {
		for _, n := range g.names {
			if n == name {
				return true
			}
		}
	}
	return false
}

// printFlags prints the named flags with the flag package's own format
// (PrintDefaults of a set holding only them, with their defaults as
// defined rather than their current values).
func (s *Set) printFlags(names []string) {
	part := flag.NewFlagSet(s.Name(), flag.ContinueOnError)
	part.SetOutput(s.Output())
	for _, n := range names {
		f := s.Lookup(n)
		part.Var(f.Value, f.Name, f.Usage)
		part.Lookup(n).DefValue = f.DefValue
	}
	part.PrintDefaults()
}
