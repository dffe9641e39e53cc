/* HAMR's transfer modes (hamr_buffer_transfer.h), over locus. See LICENSE-hamr. */
#ifndef buffer_transfer_h
#define buffer_transfer_h

namespace hamr
{
/** Whether a buffer's moves are synchronous. HAMR's default, since 2023-11-02, is async
 * for every constructor. Over locus, a move has completed when the call that made it
 * returns in every mode (locus's C API waits for its copies), so synchronize() has
 * nothing left to wait for; the mode is kept and reported as HAMR does. */
enum class buffer_transfer
{
    async = 0,     ///< all operations are asynchronous
    sync_host = 1, ///< operations moving data from GPU to host memory are synchronous
    sync = 2       ///< all operations are synchronous
};
}
#endif
