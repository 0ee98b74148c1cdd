-- Every author link takes its paper's listed_at and visibility again
-- (catalog/sql/author_links.*.sql), on PostgreSQL and SQLite alike, for links
-- written with the triggers off; links already right are not written.
-- VISIBLE(x) is the visible-paper condition on the catalog_paper row x.

UPDATE catalog_paperauthor SET listed_at = p.listed_at, visible = VISIBLE(p)
FROM catalog_paper p
WHERE p.id = catalog_paperauthor.paper_id
  AND (catalog_paperauthor.listed_at IS DISTINCT FROM p.listed_at
       OR catalog_paperauthor.visible IS DISTINCT FROM VISIBLE(p));
