// Types of the Countersign browser SDK (/sdk/countersign.js).

export declare const ClientResponseOptionType: {
  readonly ClientInput: 'client_input';
  readonly Cancel: 'cancel';
  readonly Fail: 'failure';
  readonly Custom: 'custom';
  readonly Resend: 'resend';
};

export declare const JourneyStepId: {
  readonly Success: 'action:success';
  readonly Rejection: 'action:rejection';
  readonly Information: 'action:information';
  readonly MobileApproveAuthentication: 'mobile_approve_authentication';
  readonly OtpValidation: 'otp_validation';
  readonly MobileBiometricsAuthentication: 'mobile_biometrics_authentication';
  readonly MobileBiometricsTransactionSigning: 'mobile_biometrics_transaction_signing';
  readonly EnrollmentCodeIssued: 'enrollment_code_issued';
};

export declare const ErrorCode: {
  readonly NetworkError: 'network_error';
  readonly ServerError: 'server_error';
  readonly ClientResponseNotValid: 'client_response_not_valid';
  readonly InvalidCredentials: 'invalid_credentials';
  readonly InvalidToken: 'invalid_token';
  readonly SlowDown: 'slow_down';
  readonly Expired: 'expired';
  readonly NotInitialized: 'not_initialized';
  readonly NoInteraction: 'no_interaction';
  readonly InvalidState: 'invalid_state';
  readonly Aborted: 'aborted';
};

/** A refusal or failure, with a machine-readable code. */
export declare class CountersignError extends Error {
  constructor(errorCode: string, message: string, details?: { status?: number; retryAfter?: number });
  /** One of `ErrorCode`, or the code the server sent. */
  readonly errorCode: string;
  /** The HTTP status, when the server answered. */
  readonly status?: number;
  /** Seconds to wait, for `slow_down`. */
  readonly retryAfter?: number;
}

export interface ClientResponseOption {
  type: string;
  id: string;
  label: string;
}

/** One step of a journey, as the server presents it. */
export interface IdoResponse {
  interactionId: string;
  journeyId: string;
  /** A `JourneyStepId` value or a form id. */
  journeyStepId: string;
  data: Record<string, unknown> | null;
  clientResponseOptions: Record<string, ClientResponseOption>;
  /** The signed token, at `action:success`. */
  token: string | null;
  /** Why the step repeats or the journey ended. */
  error: { code: string; message: string } | null;
}

export interface InitializeOptions {
  clientId: string;
  /** The server's base URL; this page's origin when omitted. */
  serverPath?: string;
  /** Keeps the browser credential a sign-in approved on the phone hands out (default `localStorage`; `null` keeps none). */
  storage?: Storage | null;
}

export interface ClientOptions extends InitializeOptions {
  /** Replaces the platform's fetch (tests). */
  fetch?: typeof fetch;
  /** Replaces the SDK's timer (tests); must end early when `signal` is aborted. */
  sleep?: (milliseconds: number, signal?: AbortSignal) => Promise<void>;
}

export interface StartJourneyOptions {
  additionalParams?: Record<string, unknown>;
  correlationId?: string;
  /** Transaction details: at most 10 string values. */
  approvalData?: Record<string, string>;
}

export interface WaitOptions {
  /** Called with each poll's response while the phone has not answered (`push_status` and the like). */
  onUpdate?: (response: IdoResponse) => void;
  /** Called when a poll failed for the network or the server and will be tried again (until `expires_at`). */
  onRetry?: (error: CountersignError) => void;
  /** Stops waiting; the promise rejects with `aborted`. */
  signal?: AbortSignal;
}

/** A journey client; the module functions share one. */
export declare class CountersignClient {
  constructor(options: ClientOptions);
  startJourney(journeyId: string, options?: StartJourneyOptions): Promise<IdoResponse>;
  submitClientResponse(optionId: string, data?: Record<string, unknown>): Promise<IdoResponse>;
  serializeState(): string;
  restoreFromSerializedState(text: string): IdoResponse | null;
  waitForMobileApproval(response: IdoResponse, options?: WaitOptions): Promise<IdoResponse>;
}

export declare function initialize(options: ClientOptions): void;
export declare function startJourney(journeyId: string, options?: StartJourneyOptions): Promise<IdoResponse>;
export declare function submitClientResponse(optionId: string, data?: Record<string, unknown>): Promise<IdoResponse>;
export declare function serializeState(): string;
export declare function restoreFromSerializedState(text: string): IdoResponse | null;
export declare function waitForMobileApproval(response: IdoResponse, options?: WaitOptions): Promise<IdoResponse>;
