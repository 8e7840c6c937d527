// Host teams (see host_teams in runtime.hpp). The team number lives in the
// current Team (runtime.hpp), so the threads of a parallel region inside a
// team see it too.
#include "runtime.hpp"

namespace canopy::omp {

void host_teams(void (*fn)(void*), void* data, unsigned num_teams, unsigned thread_limit) {
  const Settings& s = runtime().settings;
  if (num_teams == 0) num_teams = s.num_teams > 0 ? static_cast<unsigned>(s.num_teams) : 1;
  if (thread_limit == 0 && s.teams_thread_limit > 0) thread_limit = static_cast<unsigned>(s.teams_thread_limit);
  Icvs saved = current_icvs();
  if (thread_limit) current_icvs().thread_limit = static_cast<int>(thread_limit);
  Team& league = *this_thread().team;
  const int saved_num = league.team_num, saved_count = league.num_teams;
  league.num_teams = static_cast<int>(num_teams);
  for (unsigned t = 0; t < num_teams; ++t) {
    league.team_num = static_cast<int>(t);
    fn(data);
  }
  league.team_num = saved_num;
  league.num_teams = saved_count;
  current_icvs() = saved;
}

}  // namespace canopy::omp
