-- POI searches by name (and unfiltered listings) walk the world's POIs in
-- name order and stop at the page's end instead of sorting them all.
CREATE INDEX pois_world_name ON pois (world_id, name, id);
