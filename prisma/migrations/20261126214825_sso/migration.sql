-- AlterTable
ALTER TABLE "Organization" ADD COLUMN     "ssoOnly" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "Team" ADD COLUMN     "ssoGroup" VARCHAR(255) NOT NULL DEFAULT '';

-- CreateTable
CREATE TABLE "IdentityProvider" (
    "id" SERIAL NOT NULL,
    "slug" VARCHAR(50) NOT NULL,
    "name" VARCHAR(100) NOT NULL,
    "issuer" VARCHAR(500) NOT NULL,
    "clientId" VARCHAR(255) NOT NULL,
    "clientSecretEncrypted" TEXT NOT NULL,
    "scopes" VARCHAR(255) NOT NULL DEFAULT 'openid email profile',
    "groupsClaim" VARCHAR(100) NOT NULL DEFAULT '',
    "allowSignUp" BOOLEAN NOT NULL DEFAULT true,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "fromSettings" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modifiedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "IdentityProvider_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UserIdentity" (
    "id" SERIAL NOT NULL,
    "providerId" INTEGER NOT NULL,
    "subject" VARCHAR(255) NOT NULL,
    "userId" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSignInAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "UserIdentity_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OidcLogin" (
    "id" SERIAL NOT NULL,
    "stateHash" CHAR(64) NOT NULL,
    "browserHash" CHAR(64) NOT NULL,
    "nonce" VARCHAR(100) NOT NULL,
    "codeVerifier" VARCHAR(200) NOT NULL,
    "next" VARCHAR(2048) NOT NULL DEFAULT '/',
    "providerId" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OidcLogin_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "IdentityProvider_slug_key" ON "IdentityProvider"("slug");

-- CreateIndex
CREATE INDEX "UserIdentity_userId_idx" ON "UserIdentity"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "UserIdentity_providerId_subject_key" ON "UserIdentity"("providerId", "subject");

-- CreateIndex
CREATE UNIQUE INDEX "OidcLogin_stateHash_key" ON "OidcLogin"("stateHash");

-- CreateIndex
CREATE INDEX "OidcLogin_createdAt_idx" ON "OidcLogin"("createdAt");

-- AddForeignKey
ALTER TABLE "UserIdentity" ADD CONSTRAINT "UserIdentity_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "IdentityProvider"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UserIdentity" ADD CONSTRAINT "UserIdentity_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OidcLogin" ADD CONSTRAINT "OidcLogin_providerId_fkey" FOREIGN KEY ("providerId") REFERENCES "IdentityProvider"("id") ON DELETE CASCADE ON UPDATE CASCADE;
