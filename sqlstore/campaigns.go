package sqlstore

import (
	"context"
	"database/sql"

	"github.com/worldforge-go/worldforge"
)

// Lists of campaigns, quests and encounters are ordered most recently
// updated first, then by id.

const campaignCols = "id, owner_id, world_id, name, doc, version, created_at, updated_at"

func scanCampaign(s scanner) (*worldforge.Campaign, error) {
	var (
		c                worldforge.Campaign
		world, doc       sql.NullString
		created, updated int64
	)
	if err := s.Scan(&c.ID, &c.OwnerID, &world, &c.Name, &doc, &c.Version, &created, &updated); err != nil {
		return nil, err
	}
	c.WorldID = world.String
	c.JSON = fromNullJSON(doc)
	c.CreatedAt, c.UpdatedAt = fromMS(created), fromMS(updated)
	return &c, nil
}

func scanSummary(s scanner) (worldforge.DocSummary, error) {
	var (
		d               worldforge.DocSummary
		campaign, world sql.NullString
		updated         int64
	)
	err := s.Scan(&d.ID, &d.Name, &campaign, &world, &d.Version, &updated)
	d.CampaignID, d.WorldID = campaign.String, world.String
	d.UpdatedAt = fromMS(updated)
	return d, err
}

// CreateCampaign stores c at version 1. A missing owner or world is
// not_found.
func (db *DB) CreateCampaign(ctx context.Context, c *worldforge.Campaign) error {
	if c.ID == "" {
		c.ID = worldforge.NewID("campaign")
	}
	c.Version = 1
	c.CreatedAt = stamp(c.CreatedAt)
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = c.CreatedAt
	}
	c.UpdatedAt = stamp(c.UpdatedAt)
	_, err := db.writer.q().exec(ctx,
		"INSERT INTO campaigns ("+campaignCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		c.ID, c.OwnerID, nullStr(c.WorldID), c.Name, jsonArg(c.JSON), c.Version, ms(c.CreatedAt), ms(c.UpdatedAt))
	return wrap("create campaign", err)
}

// FindCampaignByID returns the campaign, or not_found.
func (db *DB) FindCampaignByID(ctx context.Context, id string) (*worldforge.Campaign, error) {
	c, err := scanCampaign(db.reader.q().queryRow(ctx, "SELECT "+campaignCols+" FROM campaigns WHERE id = ?", id))
	if err != nil {
		return nil, wrap("find campaign", err)
	}
	return c, nil
}

// ListCampaignsPage implements worldforge.CampaignStore: one page of the
// owner's campaigns, through the index (owner_id, updated_at DESC, id).
func (db *DB) ListCampaignsPage(ctx context.Context, ownerID string, q worldforge.PageQuery) (*worldforge.Page[worldforge.DocSummary], error) {
	page, err := docPage(ctx, db, "campaigns", "id, name, NULL, world_id, version, updated_at", ownerID, "", q)
	return page, wrap("list campaigns", err)
}

// docTable is the quests or encounters table: one shape, two tables.
type docTable struct {
	table, idPrefix, noun string
}

var (
	questTable     = docTable{"quests", "quest", "quest"}
	encounterTable = docTable{"encounters", "encounter", "encounter"}
)

const docCols = "id, owner_id, campaign_id, world_id, name, doc, version, created_at, updated_at"

func (t docTable) create(ctx context.Context, db *DB, q *worldforge.Quest) error {
	return wrap("create "+t.noun, t.insert(ctx, db.writer.q(), q))
}

// insert stores q at version 1 through the querier (in a transaction or not).
func (t docTable) insert(ctx context.Context, qr querier, q *worldforge.Quest) error {
	if q.ID == "" {
		q.ID = worldforge.NewID(t.idPrefix)
	}
	q.Version = 1
	q.CreatedAt = stamp(q.CreatedAt)
	if q.UpdatedAt.IsZero() {
		q.UpdatedAt = q.CreatedAt
	}
	q.UpdatedAt = stamp(q.UpdatedAt)
	_, err := qr.exec(ctx,
		"INSERT INTO "+t.table+" ("+docCols+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
		q.ID, q.OwnerID, nullStr(q.CampaignID), nullStr(q.WorldID), q.Name, jsonArg(q.JSON),
		q.Version, ms(q.CreatedAt), ms(q.UpdatedAt))
	return err
}

func (t docTable) find(ctx context.Context, db *DB, id string) (*worldforge.Quest, error) {
	var (
		q                worldforge.Quest
		campaign, world  sql.NullString
		doc              sql.NullString
		created, updated int64
	)
	err := db.reader.q().queryRow(ctx, "SELECT "+docCols+" FROM "+t.table+" WHERE id = ?", id).
		Scan(&q.ID, &q.OwnerID, &campaign, &world, &q.Name, &doc, &q.Version, &created, &updated)
	if err != nil {
		return nil, wrap("find "+t.noun, err)
	}
	q.CampaignID, q.WorldID = campaign.String, world.String
	q.JSON = fromNullJSON(doc)
	q.CreatedAt, q.UpdatedAt = fromMS(created), fromMS(updated)
	return &q, nil
}

// page reads one page of list, through the index (owner_id, updated_at
// DESC, id), or (campaign_id, owner_id, updated_at DESC, id) for one
// campaign.
func (t docTable) page(ctx context.Context, db *DB, ownerID, campaignID string, q worldforge.PageQuery) (*worldforge.Page[worldforge.DocSummary], error) {
	page, err := docPage(ctx, db, t.table, "id, name, campaign_id, world_id, version, updated_at", ownerID, campaignID, q)
	return page, wrap("list "+t.noun+"s", err)
}

// CreateQuest stores q at version 1. A missing owner, campaign or world is
// not_found.
func (db *DB) CreateQuest(ctx context.Context, q *worldforge.Quest) error {
	return questTable.create(ctx, db, q)
}

// FindQuestByID returns the quest, or not_found.
func (db *DB) FindQuestByID(ctx context.Context, id string) (*worldforge.Quest, error) {
	return questTable.find(ctx, db, id)
}

// ListQuestsPage implements worldforge.CampaignStore.
func (db *DB) ListQuestsPage(ctx context.Context, ownerID, campaignID string, q worldforge.PageQuery) (*worldforge.Page[worldforge.DocSummary], error) {
	return questTable.page(ctx, db, ownerID, campaignID, q)
}

// CreateEncounter stores e at version 1. A missing owner, campaign or world
// is not_found.
func (db *DB) CreateEncounter(ctx context.Context, e *worldforge.Encounter) error {
	return encounterTable.create(ctx, db, e)
}

// FindEncounterByID returns the encounter, or not_found.
func (db *DB) FindEncounterByID(ctx context.Context, id string) (*worldforge.Encounter, error) {
	return encounterTable.find(ctx, db, id)
}

// ListEncountersPage implements worldforge.CampaignStore.
func (db *DB) ListEncountersPage(ctx context.Context, ownerID, campaignID string, q worldforge.PageQuery) (*worldforge.Page[worldforge.DocSummary], error) {
	return encounterTable.page(ctx, db, ownerID, campaignID, q)
}
