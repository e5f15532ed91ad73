#pragma once

namespace ranktest {

// std::visit(Overloaded{[](const A&) {...}, [](const B&) {...}}, variant):
// one handler per alternative, so a new alternative does not compile until
// every visitor handles it.
template <typename... Handlers>
struct Overloaded : Handlers... {
  using Handlers::operator()...;
};
template <typename... Handlers>
Overloaded(Handlers...) -> Overloaded<Handlers...>;

}  // namespace ranktest
