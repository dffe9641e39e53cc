/* libumem's C++ API over locus (umem.hpp): umem::Context and its classes, one per
 * context type and one per locus technology, and umem::Address, which frees its memory
 * (or ends its connection) when it goes out of scope. Included by umem.h in C++.
 *
 * Derived from libumem's umem.hpp (https://github.com/xnd-project/umem, at def69fa),
 * Copyright (c) 2018, Plures (Xnd), BSD 3-Clause License: see LICENSE-umem. Changed
 * here: every function is inline (umem's header defined some out of line, so two
 * translation units that included it did not link); `sync` / `update` of an address
 * with no connection and `operator[]` past the end set the context's status instead of
 * an assert; `connect(nbytes, alignment)` pairs with host RAM, as umem's C++ document
 * writes it; locus's classes Locus, OpenMP, OpenCL, Sycl, WebGpu, Hip, CudaHost and
 * CudaManaged. */
#ifndef UMEM_HPP
#define UMEM_HPP

#include <memory>
#include <string>

#include "umem.h"

namespace umem {

  class Address;

  /* A memory context: allocates memory that Address objects hold. */
  class Context {
  public:
    /* Allocates nbytes; the Address frees it. */
    Address alloc(size_t nbytes);
    /* Allocates nmemb * size zeroed bytes. */
    Address calloc(size_t nmemb, size_t size);
    /* Allocates size bytes (a multiple of alignment) at an address aligned to alignment. */
    Address aligned_alloc(size_t alignment, size_t size);
    /* Whether this context's memory is used in place from dest. */
    bool is_accessible_from(Context &dest);
    /* Whether the status is OK. */
    bool is_ok();
    /* The status message ("" when none). */
    std::string get_message();
    /* The status type. */
    umemStatusType get_status();
    void set_status(umemStatusType status, const char* message);
    void set_status(umemStatusType status, std::string message);
    void clear_status();
    /* The C context (umemHost *, umemLocus *, ...). */
    virtual void * get_raw_context() = 0;
    virtual ~Context() {}
  protected:
    Context() {}
  private:
    Context(const Context&);
    Context& operator=(const Context&);
  };

  /* Host RAM. */
  class Host : public Context {
  public:
    Host() { umemHost_ctor(&ctx); }
    ~Host() { umem_dtor(&ctx); }
    void * get_raw_context() { return &ctx; }
  private:
    umemHost ctx;
  };

  /* A file in binary form. */
  class File : public Context {
  public:
    File(std::string filename, std::string mode="wb") { umemFile_ctor(&ctx, filename.c_str(), mode.c_str()); }
    ~File() { umem_dtor(&ctx); }
    void * get_raw_context() { return &ctx; }
  private:
    umemFile ctx;
  };

  /* Device memory of a CUDA device. */
  class Cuda : public Context {
  public:
    Cuda(int device) { umemCuda_ctor(&ctx, device); }
    ~Cuda() { umem_dtor(&ctx); }
    void * get_raw_context() { return &ctx; }
  private:
    umemCuda ctx;
  };

  /* Page-locked host memory of CUDA. */
  class CudaHost : public Context {
  public:
    CudaHost(unsigned int flags=0) { umemCudaHost_ctor(&ctx, flags); }
    ~CudaHost() { umem_dtor(&ctx); }
    void * get_raw_context() { return &ctx; }
  private:
    umemCudaHost ctx;
  };

  /* CUDA managed memory. */
  class CudaManaged : public Context {
  public:
    CudaManaged(unsigned int flags=0, bool async=false, uintptr_t stream=0) {
      umemCudaManaged_ctor(&ctx, flags, async, stream);
    }
    ~CudaManaged() { umem_dtor(&ctx); }
    void * get_raw_context() { return &ctx; }
  private:
    umemCudaManaged ctx;
  };

  /* Memory at a locus location by name: "opencl:0", "sycl:1", "webgpu:0", ... */
  class Locus : public Context {
  public:
    explicit Locus(std::string location) { umemLocus_ctor(&ctx, location.c_str()); }
    ~Locus() { umem_dtor(&ctx); }
    void * get_raw_context() { return &ctx; }
    /* The location's name. */
    std::string location() const { return ctx.location; }
  private:
    umemLocus ctx;
  };

  /* One class per locus technology: memory of its device number `device`. */
  class OpenMP : public Locus {
  public:
    explicit OpenMP(int device=0) : Locus("openmp:" + std::to_string(device)) {}
  };
  class OpenCL : public Locus {
  public:
    explicit OpenCL(int device=0) : Locus("opencl:" + std::to_string(device)) {}
  };
  class Sycl : public Locus {
  public:
    explicit Sycl(int device=0) : Locus("sycl:" + std::to_string(device)) {}
  };
  class WebGpu : public Locus {
  public:
    explicit WebGpu(int device=0) : Locus("webgpu:" + std::to_string(device)) {}
  };
  class Hip : public Locus {
  public:
    explicit Hip(int device=0) : Locus("hip:" + std::to_string(device)) {}
  };

  /* An address of memory in some context, with the extent it may touch. An Address
     made by alloc, calloc, aligned_alloc or connect owns its memory and frees it (or
     ends the connection) when destroyed. */
  class Address {
  public:
    Address(uintptr_t adr, size_t alignment, size_t size,
            void * raw_ctx, bool own = false, Address* mate = NULL)
      : adr_(adr), alignment_(alignment), size_(size), raw_ctx(raw_ctx), own(own), mate_(mate) {}
    ~Address() {
      if (own) {
        if (mate_ == NULL) {
          if (alignment_)
            umem_aligned_free(raw_ctx, adr_);
          else
            umem_free(raw_ctx, adr_);
        } else
          umem_disconnect(mate_->get_raw_context(), (uintptr_t)(*mate_), raw_ctx, adr_, alignment_);
      }
    }

    size_t size() const { return size_; }
    size_t alignment() const { return alignment_; }

    void copy_to(Address& dest, size_t nbytes) {
      umem_copy_to_safe(raw_ctx, adr_, size_, dest.get_raw_context(), (uintptr_t)dest, dest.size(), nbytes);
    }
    void copy_from(Address& src, size_t nbytes) {
      umem_copy_from_safe(raw_ctx, adr_, size_, src.get_raw_context(), (uintptr_t)src, src.size(), nbytes);
    }
    /* Copies nbytes of a string (host memory) here. */
    void copy_from(std::string src, size_t nbytes) {
      umem_copy_from_safe(raw_ctx, adr_, size_, ((umemVirtual*)raw_ctx)->host_ctx,
                          (uintptr_t)src.c_str(), src.size(), nbytes);
    }
    /* Memory of dest_ctx paired with this (the same memory where the contexts reach
       each other's in place, else a copy). */
    Address connect(Context& dest_ctx, size_t dest_nbytes, size_t dest_alignment = 0) {
      return Address(umem_connect(raw_ctx, adr_, dest_nbytes, dest_ctx.get_raw_context(), dest_alignment),
                     dest_alignment, dest_nbytes, dest_ctx.get_raw_context(), true, this);
    }
    /* Memory of host RAM paired with this (umem's C++ document writes
       `cuda_adr.connect(nbytes, alignment)`): connect to the context's host context. */
    Address connect(size_t dest_nbytes, size_t dest_alignment = 0) {
      void * host = ((umemVirtual*)raw_ctx)->host_ctx;
      return Address(umem_connect(raw_ctx, adr_, dest_nbytes, host, dest_alignment),
                     dest_alignment, dest_nbytes, host, true, this);
    }
    void sync_to(Address& dest, size_t nbytes) {
      umem_sync_to_safe(raw_ctx, adr_, size_, dest.get_raw_context(), (uintptr_t)dest, dest.size(), nbytes);
    }
    void sync_from(Address& src, size_t nbytes) {
      umem_sync_from_safe(raw_ctx, adr_, size_, src.get_raw_context(), (uintptr_t)src, src.size(), nbytes);
    }
    /* Pushes this connected memory's bytes to the memory it was connected from. */
    void sync(size_t nbytes) {
      if (no_mate("sync")) return;
      umem_sync_to_safe(raw_ctx, adr_, size_, mate_->get_raw_context(), (uintptr_t)(*mate_), mate_->size(), nbytes);
    }
    /* Pulls the bytes of the memory this was connected from. */
    void update(size_t nbytes) {
      if (no_mate("update")) return;
      umem_sync_from_safe(raw_ctx, adr_, size_, mate_->get_raw_context(), (uintptr_t)(*mate_), mate_->size(), nbytes);
    }
    void set(int c, size_t nbytes) { umem_set_safe(raw_ctx, adr_, size_, c, nbytes); }

    /* Byte n of host memory (the context must be one host code reaches). */
    char& operator[] (size_t n) {
      if (n >= size_)
        umem_set_status(raw_ctx, umemIndexError, "umem::Address::operator[]: index out of range");
      return ((char*)adr_)[n < size_ ? n : 0];
    }

    operator uintptr_t() { return adr_; }
    operator void*() { return (void*)adr_; }
    operator bool*() { return (bool*)adr_; }
    operator char*() { return (char*)adr_; }
    operator short*() { return (short*)adr_; }
    operator int*() { return (int*)adr_; }
    operator long*() { return (long*)adr_; }
    operator long long*() { return (long long*)adr_; }
    operator float*() { return (float*)adr_; }
    operator double*() { return (double*)adr_; }
    operator unsigned char*() { return (unsigned char*)adr_; }
    operator unsigned short*() { return (unsigned short*)adr_; }
    operator unsigned int*() { return (unsigned int*)adr_; }
    operator unsigned long*() { return (unsigned long*)adr_; }
    operator unsigned long long*() { return (unsigned long long*)adr_; }

    bool operator == (Address& other) const { return adr_ == (uintptr_t)other; }
    bool operator == (uintptr_t i) const { return adr_ == i; }
    bool operator == (int i) const { return adr_ == (uintptr_t)(unsigned int)i; }

    Address operator + (int i) const { return Address(adr_ + i, alignment_, (i < (int)size_ ? size_ - i : 0), raw_ctx); }
    Address operator + (size_t i) const { return Address(adr_ + i, alignment_, (i < size_ ? size_ - i : 0), raw_ctx); }
    int operator % (int i) const { return (int)(adr_ % i); }
    size_t operator % (size_t i) const { return adr_ % i; }

    /* The allocation an aligned address was carved from. */
    Address origin() const {
      return (alignment_ ? Address(umem_aligned_origin(raw_ctx, adr_), 0, size_, raw_ctx)
                         : Address(adr_, alignment_, size_, raw_ctx));
    }

  protected:
    void * get_raw_context() { return raw_ctx; }
  private:
    bool no_mate(const char* what) {
      if (mate_ != NULL) return false;
      std::string message = std::string("umem::Address::") + what + ": the address was not made by connect";
      umem_set_status(raw_ctx, umemValueError, message.c_str());
      return true;
    }
    uintptr_t adr_;
    size_t alignment_;
    size_t size_;
    void * raw_ctx;
    bool own;
    Address* mate_;
    Address& operator=(const Address&);
  };

  inline Address Context::alloc(size_t nbytes) {
    return Address(umem_alloc(get_raw_context(), nbytes), 0, nbytes, get_raw_context(), true);
  }
  inline Address Context::calloc(size_t nmemb, size_t size) {
    size_t nbytes = (size != 0 && nmemb > (size_t)-1 / size) ? 0 : nmemb * size;
    return Address(umem_calloc(get_raw_context(), nmemb, size), 0, nbytes, get_raw_context(), true);
  }
  inline Address Context::aligned_alloc(size_t alignment, size_t size) {
    return Address(umem_aligned_alloc(get_raw_context(), alignment, size), alignment, size, get_raw_context(), true);
  }
  inline bool Context::is_accessible_from(Context &other) {
    return umem_is_accessible_from(get_raw_context(), other.get_raw_context());
  }
  inline bool Context::is_ok() { return umem_is_ok(get_raw_context()); }
  inline std::string Context::get_message() { return umem_get_message(get_raw_context()); }
  inline umemStatusType Context::get_status() { return umem_get_status(get_raw_context()); }
  inline void Context::set_status(umemStatusType status, const char* message) {
    umem_set_status(get_raw_context(), status, message);
  }
  inline void Context::set_status(umemStatusType status, std::string message) {
    umem_set_status(get_raw_context(), status, message.c_str());
  }
  inline void Context::clear_status() { umem_clear_status(get_raw_context()); }
}

#endif
