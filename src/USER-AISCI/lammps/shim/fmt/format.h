/* Minimal stand-in for the fmt headers that Debian's liblammps-dev headers include but
 * do not ship. liblammps bundles fmt 7 in its own namespace; we never call the
 * fmt-based template overloads (error->all(FLERR, fmt, args...), utils::logmesg with
 * arguments), only the std::string overloads, so declarations suffice here.
 * Rule for adapter code: always pass a std::string (see aisci_lmp.h), never a
 * string literal with format arguments. */
#ifndef AISCI_FMT_SHIM_H
#define AISCI_FMT_SHIM_H

namespace fmt {
template <typename Char> class basic_string_view;
using string_view = basic_string_view<char>;
class format_args;
template <typename... Args, typename S> void make_args_checked(const S &, const Args &...);
}    // namespace fmt

#endif
