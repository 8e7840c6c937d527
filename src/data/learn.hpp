// Private to src/data/: the counters of what the data layer did (DataStats)
// that the migration code adds to; first-touch learning lives in learn.cpp.
#pragma once
#include <cstdint>

namespace canopy::data_impl {

// Pages canopy moved (and the kernel left where they were) in one migration.
void count_migration(std::uint64_t moved_pages, std::uint64_t page_size, std::uint64_t left_pages);
// One next-touch / next-write claim and what it moved (touch.cpp; the pages
// are also in count_migration's totals, which the move itself adds to).
void count_touch_claim(std::uint64_t moved_pages, std::uint64_t page_size, std::uint64_t left_pages);

}  // namespace canopy::data_impl
