// An OTP sealed for a payment being created (a payin, a transfer's collection): sealed once the
// create is decided, just before its append, and deleted again only when it is certain that this
// attempt committed nothing. An append whose commit is in doubt (a lost connection) keeps it: the
// payment may exist, and the gateway must hand the OTP to the provider (issue 28). A sealed OTP
// nobody uses goes with the vault's purge (OTP_TTL_MS).
import { DomainError, InvariantViolation } from '../domain/errors.ts';
import { WrongExpectedVersion } from '../infra/eventstore/types.ts';
import { otpVault, type SealedOtp } from '../infra/otp-vault.ts';
import type { Services } from './services.ts';

/** Failures after which nothing of the attempt was committed: refused, or the append lost its race. */
export const certainlyNotCommitted = (err: unknown) =>
  err instanceof DomainError || err instanceof WrongExpectedVersion || err instanceof InvariantViolation;

/**
 * Runs `create`, which calls `seal()` once it has decided to append (again on a retried attempt:
 * it seals only once). No OTP (`otp` undefined): `seal` does nothing.
 */
export async function withSealedOtp<R>(
  s: Services, reference: string, otp: string | undefined, create: (seal: () => Promise<void>) => Promise<R>,
): Promise<R> {
  const vault = otpVault(s);
  let sealed: SealedOtp | undefined;
  const seal = async () => {
    if (otp !== undefined && !sealed) sealed = await vault.seal(reference, otp);
  };
  try {
    return await create(seal);
  } catch (err) {
    if (sealed && certainlyNotCommitted(err)) await vault.discardAttempt(sealed);
    throw err;
  }
}
