package countersign

import countersign.client.Authenticator
import countersign.client.CountersignException
import countersign.client.PushRegistration
import countersign.client.SoftwareKeyStore
import countersign.core.ApprovalData
import countersign.core.AuthenticationChallenge
import countersign.core.LenientBase64
import countersign.core.TransactionChallenge
import kotlinx.coroutines.runBlocking
import org.json.JSONObject
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.attribute.PosixFilePermissions

@DisplayName("Authenticator and the software key store")
class AuthenticatorTest {
    private val keys = KeysOnDisk()
    private val ada = "ada@example.com"
    private val shown = mapOf("amount" to "10.00", "currency" to "EUR", "payee" to "Bob")
    private val nonce = LenientBase64.urlEncode(ByteArray(32) { 7 })

    @AfterEach
    fun removeKeys() = keys.close()

    private fun registered(): Authenticator = runBlocking {
        val authenticator = Authenticator(SoftwareKeyStore(keys.file))
        authenticator.registerNativeBiometrics(ada)
        authenticator.keepRegisteredKeys(ada)
        authenticator
    }

    /** A registration's two keys, not kept: its `mobile_biometrics_registration` and `device_registration` inputs. */
    private suspend fun Authenticator.registerBothKeys(user: String, deviceChallenge: String): Pair<JSONObject, JSONObject> =
        registerNativeBiometrics(user) to registerDevice(deviceChallenge, "Phone", "Test", PushRegistration.INBOX)

    /** Asserts [authenticator] signs [challenge] with the key of the [biometric] registration input and device proofs with [device]'s key. */
    private suspend fun assertSignsWith(authenticator: Authenticator, biometric: JSONObject, device: JSONObject, challenge: String) {
        assertEquals(biometric.getString("publicKeyId"), authenticator.authenticateNativeBiometrics(ada, challenge).getString("publicKeyId"))
        assertTrue(verifies(device.getString("device_public_key"), "proof", authenticator.signWithDeviceKey("proof")))
    }

    @Test
    @DisplayName("a transaction whose challenge differs from the details shown is refused before anything is signed")
    fun challengeMismatch() = runBlocking<Unit> {
        val authenticator = registered()
        val challenge = TransactionChallenge.derive(ApprovalData(shown), nonce)!!
        val tampered = TransactionChallenge.derive(ApprovalData(shown + ("amount" to "10000.00")), nonce)!!
        assertThrows(CountersignException.ChallengeMismatch::class.java) {
            runBlocking { authenticator.approvalNativeBiometrics(ada, shown, nonce, tampered) }
        }
        // The details shown differ from those the server's challenge was made of.
        assertThrows(CountersignException.ChallengeMismatch::class.java) {
            runBlocking { authenticator.approvalNativeBiometrics(ada, shown + ("payee" to "Mallory"), nonce, challenge) }
        }
        val input = authenticator.approvalNativeBiometrics(ada, shown, nonce, challenge)
        assertEquals(ada, input.getString("userIdentifier"))
        assertEquals(setOf("publicKeyId", "signedChallenge", "userIdentifier"), input.keys().asSequence().toSet())
    }

    @Test
    @DisplayName("a nonce not written as the server writes it gets no signature, though its challenge matches")
    fun nonceNotAsTheServerWritesIt() = runBlocking<Unit> {
        val authenticator = registered()
        for (nonce in Vectors.strings("nonces_refused")) {
            val bytes = LenientBase64.decode(nonce) ?: continue
            val challenge = TransactionChallenge.derive(ApprovalData(shown), bytes)
            assertThrows(CountersignException.ChallengeMismatch::class.java, {
                runBlocking { authenticator.approvalNativeBiometrics(ada, shown, nonce, challenge) }
            }, nonce)
        }
    }

    @Test
    @DisplayName("a sign-in step that sends a transaction's challenge gets no signature")
    fun transactionChallengeAsSignIn() = runBlocking<Unit> {
        val authenticator = registered()
        val payment = TransactionChallenge.derive(ApprovalData(mapOf("amount" to "10000.00", "payee" to "Mallory")), nonce)!!
        assertThrows(CountersignException.NotAnAuthenticationChallenge::class.java) {
            runBlocking { authenticator.authenticateNativeBiometrics(ada, payment) }
        }
    }

    @Test
    @DisplayName("keys are kept in a file only its owner can read and write, and come back the same after a restart")
    fun keysPersist() = runBlocking<Unit> {
        val first = Authenticator(SoftwareKeyStore(keys.file))
        val registration = first.registerNativeBiometrics(ada)
        first.keepRegisteredKeys(ada)
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(keys.file.toPath())))

        val again = Authenticator(SoftwareKeyStore(keys.file))
        val challenge = AuthenticationChallenge.PREFIX + LenientBase64.urlEncode(ByteArray(32) { 1 })
        val signed = again.authenticateNativeBiometrics(ada, challenge)
        assertEquals(registration.getString("publicKeyId"), signed.getString("publicKeyId"))
        assertTrue(verifies(registration.getString("publicKey"), challenge, signed.getString("signedChallenge")))
        val missing = assertThrows(CountersignException.KeyNotFound::class.java) {
            runBlocking { again.authenticateNativeBiometrics("bob@example.com", challenge) }
        }
        assertEquals("countersign.biometric.bob@example.com", missing.alias)
    }

    @Test
    @DisplayName("a registration's new keys sign nothing until kept; a failed one leaves the phone signing with the keys it had")
    fun keysKeptOnlyOnSuccess() = runBlocking<Unit> {
        val authenticator = Authenticator(SoftwareKeyStore(keys.file))
        val (firstBiometric, firstDevice) = authenticator.registerBothKeys(ada, "c1")
        authenticator.keepRegisteredKeys(ada)

        // A second registration makes new keys, and its journey fails: nothing keeps them.
        val (secondBiometric, _) = authenticator.registerBothKeys(ada, "c2")
        assertNotEquals(firstBiometric.getString("publicKeyId"), secondBiometric.getString("publicKeyId"))

        // The app restarted: it signs with the first registration's keys, and the second's are never kept.
        val again = Authenticator(SoftwareKeyStore(keys.file))
        val challenge = AuthenticationChallenge.PREFIX + "x"
        assertSignsWith(again, firstBiometric, firstDevice, challenge)
        assertThrows(CountersignException.NoRegisteredKeys::class.java) { runBlocking { again.keepRegisteredKeys(ada) } }

        // A later registration that makes only a biometric key keeps only that.
        val third = again.registerNativeBiometrics(ada)
        again.keepRegisteredKeys(ada)
        assertSignsWith(again, third, firstDevice, challenge)

        // The file is replaced whole at each change: it stays private, with nothing left beside it.
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(keys.file.toPath())))
        assertEquals(listOf("keys.json"), keys.directory.list()!!.toList())
    }

    @Test
    @DisplayName("a failed registration's waiting keys are deleted when discarded, after a restart too, and the keys in use go on signing")
    fun waitingKeysDiscarded() = runBlocking<Unit> {
        val authenticator = Authenticator(SoftwareKeyStore(keys.file))
        val (first, firstDevice) = authenticator.registerBothKeys(ada, "c1")
        authenticator.keepRegisteredKeys(ada)
        val stored = keys.aliases()
        assertEquals(setOf("countersign.device", "countersign.biometric.$ada"), stored)

        authenticator.registerBothKeys("bob@example.com", "c2")
        authenticator.discardRegisteredKeys("bob@example.com")
        assertEquals(stored, keys.aliases())
        authenticator.registerNativeBiometrics("eve@example.com")
        val restarted = Authenticator(SoftwareKeyStore(keys.file))
        restarted.discardRegisteredKeys("eve@example.com")
        assertEquals(stored, keys.aliases())
        assertThrows(CountersignException.NoRegisteredKeys::class.java) { runBlocking { authenticator.keepRegisteredKeys("bob@example.com") } }

        assertSignsWith(restarted, first, firstDevice, AuthenticationChallenge.PREFIX + "y")
    }

    @Test
    @DisplayName("each step's input has exactly the fields the server reads")
    fun inputShapes() = runBlocking<Unit> {
        val authenticator = Authenticator(SoftwareKeyStore(keys.file), osName = "Android")
        val registration = authenticator.registerNativeBiometrics(ada)
        assertEquals(setOf("publicKey", "publicKeyId", "os", "keyType"), registration.keys().asSequence().toSet())
        assertEquals("Android", registration.getString("os"))
        assertEquals("ec", registration.getString("keyType"))
        assertEquals(Authenticator.publicKeyId(LenientBase64.decode(registration.getString("publicKey"))!!), registration.getString("publicKeyId"))
        val device = authenticator.registerDevice("challenge", "Ada's phone", "Pixel 8", PushRegistration("fcm", "fcm-token", "com.example.bank"))
        assertEquals(setOf("device_public_key", "signature", "name", "model", "os", "push"), device.keys().asSequence().toSet())
        assertEquals(mapOf("channel" to "fcm", "token" to "fcm-token", "app_id" to "com.example.bank"), Vectors.map(device.getJSONObject("push")))
        assertTrue(verifies(device.getString("device_public_key"), "challenge", device.getString("signature")))
        assertEquals(mapOf("channel" to "inbox"), Vectors.map(PushRegistration.INBOX.toJson()))
    }
}
