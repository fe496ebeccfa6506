"""testio campaign and testio compare: a grid of tests run repeatedly, with statistics, and the
comparison of two results (docs/compare.md). Run by the binary as python3 -m testio_campaign."""
