#include <napi.h>
namespace basin { void RegisterCsv(Napi::Env, Napi::Object) {} }
