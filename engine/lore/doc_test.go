package lore

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// docTable renders the schema table of the package doc from the field
// descriptors, so that the doc cannot drift from the schemas.
func docTable() string {
	var b strings.Builder
	row := func(coll, name, typ, ref string) {
		line := fmt.Sprintf("//\t%-12s %-15s %-34s %s", coll, name, typ, ref)
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	row("collection", "field", "type", "references")
	common := spec{name: "(every)"}.allFields()
	for _, f := range common {
		coll := ""
		if f.name == "id" {
			coll = "(every)"
		}
		row(coll, f.name, typeWords(f), refWords(f))
	}
	for _, s := range specs {
		for i, f := range s.fields {
			coll := ""
			if i == 0 {
				coll = s.name
			}
			row(coll, f.name, typeWords(f), refWords(f))
		}
	}
	return b.String()
}

func typeWords(f field) string {
	n := func(x float64) string {
		switch x {
		case MinYear:
			return "-1e9"
		case MaxYear:
			return "1e9"
		}
		return fmt.Sprint(x)
	}
	switch f.kind {
	case kID:
		return "slug, required"
	case kText:
		if f.required {
			return fmt.Sprintf("text %d–%d, required", f.minLen, f.maxLen)
		}
		return fmt.Sprintf("text ≤%d", f.maxLen)
	case kInt:
		return fmt.Sprintf("integer %s..%s", n(f.lo), n(f.hi))
	case kBool:
		return "boolean"
	case kEnum:
		return "enum " + strings.Join(f.enum, "|")
	case kRef:
		return "slug"
	case kRefs:
		return fmt.Sprintf("[slug] ≤%d", f.maxItems)
	case kTexts:
		return fmt.Sprintf("[text %d–%d] ≤%d", f.minLen, f.maxLen, f.maxItems)
	case kEnums:
		return "[enum " + strings.Join(f.enum, "|") + "]"
	case kAnyRefs:
		return fmt.Sprintf("[{collection,id}] ≤%d", f.maxItems)
	}
	return "?"
}

func refWords(f field) string {
	switch f.kind {
	case kRef, kRefs:
		return "→ " + f.target
	case kAnyRefs:
		return "→ any collection"
	}
	return ""
}

func TestDocTable(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	if want := docTable(); !strings.Contains(string(doc), want) {
		t.Errorf("doc.go does not hold the schema table; want:\n%s", want)
	}
}
