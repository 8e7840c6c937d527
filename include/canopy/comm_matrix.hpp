// canopy::CommMatrix: how much task i and task j communicate. Symmetric,
// finite, non-negative, diagonal ignored; stored sparse (CSR with both
// directions of each edge) so that a 100,000-task stencil costs memory in
// proportion to its edges, not to n².
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace canopy {

// Largest matrix canopy accepts (tasks); beyond it a file is taken as wrong.
inline constexpr std::int64_t kMaxTasks = 1 << 24;

struct Edge {
  int i = 0;
  int j = 0;
  double weight = 0;
};

enum class MatrixFormat { Auto, Dense, MatrixMarket, EdgeList };

class CommMatrix {
 public:
  CommMatrix() = default;
  // n tasks, no communication.
  explicit CommMatrix(int n);
  // From edges (i, j, w), the entries of a matrix C (repeated entries add
  // up). A symmetric C is taken as is; otherwise the result is C + Cᵀ, the
  // total traffic between i and j. A triangular C (each pair given in one
  // direction only, as in an edge list) thus gives back its values. Self-edges
  // and zero weights are dropped. Throws canopy::Error on an out-of-range
  // index or a negative, NaN or infinite weight. `symmetrized` (optional) is
  // set when C was asymmetric and some pair's two directions were added.
  static CommMatrix from_edges(int n, const std::vector<Edge>& edges, bool* symmetrized = nullptr);
  // From a dense row-major n×n matrix (same rules).
  static CommMatrix from_dense(const std::vector<std::vector<double>>& rows, bool* symmetrized = nullptr);

  int size() const { return n_; }
  std::int64_t num_edges() const { return static_cast<std::int64_t>(col_.size()) / 2; }  // undirected
  // Neighbours of task i: columns [row_begin(i), row_end(i)) of cols()/weights().
  std::int64_t row_begin(int i) const { return row_ptr_[i]; }
  std::int64_t row_end(int i) const { return row_ptr_[i + 1]; }
  const std::vector<int>& cols() const { return col_; }
  const std::vector<double>& weights() const { return val_; }
  const std::vector<std::int64_t>& row_ptr() const { return row_ptr_; }
  // Weight between i and j (0 when none); O(log degree).
  double at(int i, int j) const;
  // Total communication of task i with all others.
  double row_sum(int i) const;
  // Sum over undirected edges.
  double total() const;
  // Dense copy (n² memory: for small matrices and tests only).
  std::vector<std::vector<double>> dense() const;
  // Undirected edges with i < j, sorted.
  std::vector<Edge> edges() const;

  bool operator==(const CommMatrix&) const = default;

 private:
  int n_ = 0;
  std::vector<std::int64_t> row_ptr_{0};
  std::vector<int> col_;
  std::vector<double> val_;
};

// What a reader learned besides the matrix.
struct MatrixReadInfo {
  MatrixFormat format = MatrixFormat::Auto;  // the format actually read
  bool symmetrized = false;                  // input was asymmetric: C + Cᵀ was taken
  bool had_diagonal = false;                 // non-zero diagonal entries were ignored
};

// Read a matrix file. Auto detects: a first line starting "%%MatrixMarket"
// or a .mtx extension -> MatrixMarket; a .edges/.el/.edgelist extension, or
// a comment line before the first data line whose first word is "edges" or
// "tasks" ("# edges: i j weight", "# tasks 100") -> edge list; otherwise
// dense rows (whitespace or comma separated, '#' comments). Every error names
// the file, the line and what was expected.
CommMatrix read_matrix(const std::string& path, MatrixFormat format = MatrixFormat::Auto,
                       MatrixReadInfo* info = nullptr);
// The same from a stream; `name` is used in error messages.
CommMatrix read_matrix(std::istream& in, const std::string& name, MatrixFormat format = MatrixFormat::Auto,
                       MatrixReadInfo* info = nullptr);
// Writes what read_matrix reads back as the same matrix (MatrixMarket as a
// symmetric lower triangle, edge lists with a "# tasks N" line). Auto: dense
// for a stream; for a path, chosen by extension as read_matrix detects it.
void write_matrix(std::ostream& out, const CommMatrix& m, MatrixFormat format);
void write_matrix(const std::string& path, const CommMatrix& m, MatrixFormat format);
// Parse a format name ("dense", "mm"/"matrixmarket", "edges"/"edgelist", "auto").
MatrixFormat parse_matrix_format(const std::string& name);

// Heat map of the matrix as SVG (log grey scale: darker = more traffic).
// Large matrices are binned down to at most `max_cells` rows/columns.
std::string matrix_svg(const CommMatrix& m, int max_cells = 512);

}  // namespace canopy
