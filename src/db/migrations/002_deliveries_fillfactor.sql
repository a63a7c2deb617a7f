-- Room on each page for every version of a delivery row. A row is written queued, rewritten when a
-- worker claims it and again when its outcome is recorded; the claim is a HOT update only when the new
-- version fits on the same page. At fillfactor 70 a page filled by a burst of inserts had room for the
-- claims of about a third of its rows: the rest moved to new pages and added an entry to every index.
-- At 40 every claim fits (measured: 7,808 of 7,808 claims HOT, against 3,875 at 70), and so does
-- the recorded version. Only pages written from now on are affected.
ALTER TABLE deliveries SET (fillfactor = 40);
