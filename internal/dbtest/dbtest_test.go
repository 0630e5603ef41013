package dbtest

import (
	"testing"

	"github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/sqlstore"
)

func TestWithSearchPath(t *testing.T) {
	cases := []struct{ dsn, want string }{
		{"postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
			"postgres://postgres@127.0.0.1:5432/test?search_path=wf_test_x&sslmode=disable"},
		{"postgresql://u:p@h/db", "postgresql://u:p@h/db?search_path=wf_test_x"},
		{"host=h dbname=db", "host=h dbname=db search_path=wf_test_x"},
	}
	for _, c := range cases {
		got, err := withSearchPath(c.dsn, "wf_test_x")
		if err != nil || got != c.want {
			t.Errorf("withSearchPath(%q) = %q, %v; want %q", c.dsn, got, err, c.want)
		}
	}
}

// TestForEachEngine checks that each subtest gets its engine and a database
// of its own.
func TestForEachEngine(t *testing.T) {
	var ran []string
	ForEachEngine(t, func(t *testing.T, db *sqlstore.DB) {
		ran = append(ran, db.Engine())
		if t.Name() != "TestForEachEngine/"+db.Engine() {
			t.Errorf("subtest %s runs engine %s", t.Name(), db.Engine())
		}
		u := &worldforge.User{ID: "user_same", Name: "x"}
		if err := db.CreateUser(t.Context(), u); err != nil {
			t.Fatal(err)
		}
		// A second store of the same engine starts empty.
		other := MustOpen(t, DSN(t, db.Engine()))
		if _, err := other.FindUserByID(t.Context(), u.ID); worldforge.ErrorCode(err) != worldforge.ENotFound {
			t.Errorf("fresh store sees another's user: %v", err)
		}
	})
	if len(ran) == 0 || ran[0] != sqlstore.EngineSQLite {
		t.Errorf("engines run: %v, want sqlite first", ran)
	}
}
