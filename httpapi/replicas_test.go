package httpapi_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/bench"
	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// rawExec is a third process's writes on the database of dsn, through a
// database/sql handle of its own: statements with ? placeholders.
type rawExec struct {
	db       *sql.DB
	postgres bool
}

func openRaw(t *testing.T, dsn string) *rawExec {
	t.Helper()
	r := &rawExec{postgres: strings.HasPrefix(dsn, "postgres")}
	var err error
	if r.postgres {
		r.db, err = sql.Open("pgx", dsn)
	} else {
		r.db, err = sql.Open("sqlite", strings.TrimPrefix(dsn, "sqlite:")+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.db.Close() })
	return r
}

func (r *rawExec) ExecForTest(ctx context.Context, query string, args ...any) error {
	if r.postgres {
		var b strings.Builder
		n := 0
		for _, c := range query {
			if c == '?' {
				n++
				b.WriteString("$" + strconv.Itoa(n))
				continue
			}
			b.WriteRune(c)
		}
		query = b.String()
	}
	_, err := r.db.ExecContext(ctx, query, args...)
	return err
}

// replicaWorld is what a test reads back from read_world's answer.
type replicaWorld struct {
	Name string `json:"name"`
	JSON struct {
		Runtime wf.WorldRuntime `json:"runtime"`
	} `json:"json"`
}

// readWorldOver calls read_world for the world on the server at url, with
// the key, over HTTP (fast path unless the server has it off).
func readWorldOver(ctx context.Context, client *http.Client, url, key, worldID string) (replicaWorld, error) {
	var out replicaWorld
	body := bench.ToolCallBody(1, bench.Protocol20251125, "read_world", map[string]any{"id": worldID})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return out, err
	}
	req.Header = bench.ToolCallHeaders(bench.Protocol20251125, "read_world")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		return out, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return out, err
	}
	msg, err := bench.ResponseMessage(resp.Header, data)
	if err != nil {
		return out, err
	}
	var rpc struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &rpc); err != nil {
		return out, fmt.Errorf("decode %s: %w", msg, err)
	}
	if rpc.Result.IsError || len(rpc.Result.Content) != 1 {
		return out, fmt.Errorf("read_world failed: %s", msg)
	}
	if err := json.Unmarshal([]byte(rpc.Result.Content[0].Text), &out); err != nil {
		return out, fmt.Errorf("decode answer: %w", err)
	}
	return out, nil
}

// TestReadWorldReplicas runs two servers (replicas: each its own store
// handle and its own kept answers) on one database. Every change to what
// read_world answers, made through either replica's store, is in the next
// read_world of both: one change of each kind, then writers and readers
// on both replicas at once, where a read that starts after a write was
// acknowledged must show it.
func TestReadWorldReplicas(t *testing.T) {
	dbtest.ForEachDSN(t, func(t *testing.T, dsn string) {
		ctx := t.Context()
		a := testserver.Start(t, dbtest.MustOpen(t, dsn))
		b := testserver.StartWith(t, dbtest.MustOpen(t, dsn), testserver.Config{NoFastPath: true})
		raw := openRaw(t, dsn)
		world, owner := a.World, a.Owner
		key := a.Key(t, owner, wf.ScopeAll)
		urls := []string{a.MCPURL(), b.MCPURL()}
		client := &http.Client{}
		read := func(t *testing.T, url string) replicaWorld {
			t.Helper()
			w, err := readWorldOver(ctx, client, url, key, world.ID)
			if err != nil {
				t.Fatal(err)
			}
			return w
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}

		t.Run("each change", func(t *testing.T) {
			changes := []struct {
				name  string
				write func() error
				check func(w replicaWorld) bool
			}{
				{"world row", func() error {
					return raw.ExecForTest(ctx, "UPDATE worlds SET name = ? WHERE id = ?", "Renamed", world.ID)
				}, func(w replicaWorld) bool { return w.Name == "Renamed" }},
				{"presence insert", func() error {
					return b.DB.SetPresence(ctx, &wf.Presence{WorldID: world.ID, UserID: a.Player.ID, X: 1, Y: 1})
				}, func(w replicaWorld) bool {
					return len(w.JSON.Runtime.Presence) == 1 && w.JSON.Runtime.Presence[0].X == 1
				}},
				{"presence update", func() error {
					return a.DB.SetPresence(ctx, &wf.Presence{WorldID: world.ID, UserID: a.Player.ID, X: 2, Y: 1})
				}, func(w replicaWorld) bool {
					return len(w.JSON.Runtime.Presence) == 1 && w.JSON.Runtime.Presence[0].X == 2
				}},
				{"opened insert", func() error {
					return raw.ExecForTest(ctx, "INSERT INTO opened_pois (world_id, poi_id, opened_by, opened_at) VALUES (?, ?, ?, 1)", world.ID, a.POI.ID, a.Player.ID)
				}, func(w replicaWorld) bool { return len(w.JSON.Runtime.OpenedPOIs) == 1 }},
				{"opened delete", func() error {
					return raw.ExecForTest(ctx, "DELETE FROM opened_pois WHERE world_id = ?", world.ID)
				}, func(w replicaWorld) bool { return len(w.JSON.Runtime.OpenedPOIs) == 0 }},
				{"inventory insert", func() error {
					return raw.ExecForTest(ctx, "INSERT INTO inventory (world_id, user_id, item_id, poi_id, name, picked_at) VALUES (?, ?, 'gem', ?, 'Gem', 1)", world.ID, a.Player.ID, a.POI.ID)
				}, func(w replicaWorld) bool {
					return len(w.JSON.Runtime.PickedItems) == 1 && w.JSON.Runtime.PickedItems[0].Name == "Gem"
				}},
				{"inventory update", func() error {
					return raw.ExecForTest(ctx, "UPDATE inventory SET name = 'Ruby' WHERE world_id = ?", world.ID)
				}, func(w replicaWorld) bool {
					return len(w.JSON.Runtime.PickedItems) == 1 && w.JSON.Runtime.PickedItems[0].Name == "Ruby"
				}},
				{"inventory delete", func() error {
					return raw.ExecForTest(ctx, "DELETE FROM inventory WHERE world_id = ?", world.ID)
				}, func(w replicaWorld) bool { return len(w.JSON.Runtime.PickedItems) == 0 }},
				{"presence delete", func() error {
					return raw.ExecForTest(ctx, "DELETE FROM presence WHERE world_id = ?", world.ID)
				}, func(w replicaWorld) bool { return len(w.JSON.Runtime.Presence) == 0 }},
			}
			for _, c := range changes {
				for _, u := range urls { // both replicas keep the answer before the change
					read(t, u)
					read(t, u)
				}
				must(c.write())
				for i, u := range urls {
					if w := read(t, u); !c.check(w) {
						t.Errorf("%s: replica %d answered %+v after the change", c.name, i, w)
					}
				}
			}
		})

		t.Run("concurrent", func(t *testing.T) {
			// Writers set the player's x, and the world's name, to an
			// increasing n on alternate replicas; acked holds the last n
			// acknowledged. A reader notes acked before it starts and must
			// see at least that n.
			const writes = 150
			var acked atomic.Int64
			var wg sync.WaitGroup
			stop := make(chan struct{})
			errs := make(chan error, 64)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(stop)
				dbs := []interface {
					SetPresence(context.Context, *wf.Presence) error
				}{a.DB, b.DB}
				for n := 1; n <= writes; n++ {
					db := dbs[n%2]
					if err := db.SetPresence(ctx, &wf.Presence{WorldID: world.ID, UserID: a.Player.ID, X: n % 16, Y: n / 16}); err != nil {
						errs <- err
						return
					}
					if err := raw.ExecForTest(ctx, "UPDATE worlds SET name = ? WHERE id = ?", fmt.Sprintf("n%04d", n), world.ID); err != nil {
						errs <- err
						return
					}
					acked.Store(int64(n))
				}
			}()
			for r := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						before := acked.Load()
						w, err := readWorldOver(ctx, client, urls[r%2], key, world.ID)
						if err != nil {
							errs <- err
							return
						}
						var n int64
						if _, err := fmt.Sscanf(w.Name, "n%d", &n); err != nil && before > 0 {
							errs <- fmt.Errorf("name %q", w.Name)
							return
						}
						if n < before {
							errs <- fmt.Errorf("replica %d answered name %q after n%04d was acknowledged", r%2, w.Name, before)
							return
						}
						if p := w.JSON.Runtime.Presence; n > 0 && (len(p) != 1 || int64(p[0].Y*16+p[0].X) < n) {
							errs <- fmt.Errorf("replica %d answered presence %+v with name %q: older than the name", r%2, p, w.Name)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			// And once all is written, both replicas answer the last state.
			for i, u := range urls {
				if w := read(t, u); w.Name != fmt.Sprintf("n%04d", writes) || !strings.HasPrefix(w.Name, "n") {
					t.Errorf("replica %d answered %q at the end, want n%04d", i, w.Name, writes)
				}
			}
		})
	})
}
