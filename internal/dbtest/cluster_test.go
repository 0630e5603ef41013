package dbtest

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

// TestCluster: the private server answers, is down after Stop and answers
// again after Start.
func TestCluster(t *testing.T) {
	c := StartCluster(t)
	db, err := sql.Open("pgx", c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ping := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return db.PingContext(ctx)
	}
	if err := ping(); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	if err := ping(); err == nil {
		t.Fatal("ping succeeded with the server stopped")
	}
	c.Start()
	if err := ping(); err != nil {
		t.Fatalf("after Start: %v", err)
	}
}
